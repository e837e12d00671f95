/**
 * What a hypergate cache hit writes, captured from a real answer so the baseline server writes
 * the same bytes and headers (Date, Connection and Keep-Alive are left to node:http, which adds
 * them itself on both sides).
 */
import { header, httpGet, type Answer } from './http.ts';

export interface Capture {
  readonly ok: { readonly headers: string[]; readonly body: string };
  readonly notModified: { readonly headers: string[] };
  readonly etag: string;
}

const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function ownHeaders(answer: Answer): string[] {
  const out: string[] = [];
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    const name = answer.rawHeaders[i] as string;
    if (!NODE_OWN.has(name.toLowerCase())) out.push(name, answer.rawHeaders[i + 1] as string);
  }
  return out;
}

/** Asks `url` until it is a cache hit, then for the 304 of the same representation. */
export async function captureHit(url: string, headers: Record<string, string>): Promise<Capture> {
  let hit: Answer | null = null;
  for (let attempt = 0; attempt < 5 && hit === null; attempt++) {
    const answer = await httpGet(url, headers);
    if (answer.status !== 200) throw new Error(`capture: GET ${url} answered ${answer.status}: ${answer.body.toString()}`);
    if (header(answer, 'cache-status')?.includes('hit') === true) hit = answer;
  }
  if (hit === null) throw new Error(`capture: GET ${url} never became a cache hit`);
  const etag = header(hit, 'etag');
  if (etag === undefined) throw new Error('capture: the cache hit has no ETag');
  const notModified = await httpGet(url, { ...headers, 'if-none-match': etag });
  if (notModified.status !== 304) throw new Error(`capture: If-None-Match answered ${notModified.status}, not 304`);
  return { ok: { headers: ownHeaders(hit), body: hit.body.toString('base64') }, notModified: { headers: ownHeaders(notModified) }, etag };
}
