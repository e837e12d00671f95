/**
 * The curl options docs/tutorial.md uses, sent with fetch: a tutorial's curl command runs in a test
 * without depending on a curl binary, and prints what curl would have printed.
 */

/** What one curl command asked for. */
export interface CurlRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | undefined;
  /** `-i`: print the status line and the header fields before the body. */
  readonly include: boolean;
  /** `-w FORMAT`: print this (with `%header{name}` and `%{http_code}` filled in) instead of the body. */
  readonly writeOut: string | undefined;
}

/** A curl command's words (after `curl`) as a request; throws on an option it does not know. */
export function parseCurl(words: readonly string[]): CurlRequest {
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  let include = false;
  let writeOut: string | undefined;
  const headers: [string, string][] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const value = (): string => {
      const next = words[++i];
      if (next === undefined) throw new Error(`curl ${word} needs a value`);
      return next;
    };
    if (word === '-X' || word === '--request') method = value();
    else if (word === '-H' || word === '--header') {
      const field = value();
      const colon = field.indexOf(':');
      headers.push([field.slice(0, colon).trim(), field.slice(colon + 1).trim()]);
    } else if (word === '-d' || word === '--data' || word === '--data-raw') body = value();
    else if (word === '-w' || word === '--write-out') writeOut = value();
    else if (word === '-o' || word === '--output') {
      if (value() !== '/dev/null') throw new Error('curl -o: only /dev/null is read');
    } else if (/^-[is]+$/.test(word)) include ||= word.includes('i');
    else if (word.startsWith('-')) throw new Error(`curl option ${word} is not read here`);
    else url = /^https?:\/\//.test(word) ? word : `http://${word}`;
  }
  if (url === undefined) throw new Error('curl without a URL');
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body, include, writeOut };
}

/** The answer to a curl request: its status, and what curl would print. */
export interface CurlAnswer {
  readonly status: number;
  readonly printed: string;
}

/** Sends the request with fetch, as curl would (no redirects followed, the body as given). */
export async function runCurl(request: CurlRequest): Promise<CurlAnswer> {
  const res = await fetch(request.url, {
    method: request.method,
    headers: request.headers.map(([name, value]) => [name, value]),
    body: request.body,
    redirect: 'manual',
  });
  const body = await res.text();
  if (request.writeOut !== undefined) {
    const printed = request.writeOut
      .replace(/%header\{([^}]+)\}/g, (_, name: string) => res.headers.get(name) ?? '')
      .replace(/%\{http_code\}/g, String(res.status));
    return { status: res.status, printed };
  }
  const head = [`HTTP/1.1 ${res.status} ${res.statusText}`, ...[...res.headers].map(([name, value]) => `${name}: ${value}`)].join('\n');
  return { status: res.status, printed: request.include ? `${head}\n\n${body}` : body };
}
