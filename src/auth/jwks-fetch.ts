import type { Dispatcher } from 'undici';
import { undici } from '../upstream/undici.ts';
import type { JwksFetchResult } from '../observability/metrics.ts';

/** Why a key set could not be had. Always the key server's failure, never the client's (503, not 401). */
export class JwksFetchError extends Error {
  override readonly name = 'JwksFetchError';
  readonly result: Exclude<JwksFetchResult, 'ok'>;

  constructor(result: Exclude<JwksFetchResult, 'ok'>, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.result = result;
  }
}

export interface JwksFetchOptions {
  /** One deadline over connect, response head and the whole body, in ms. */
  readonly timeoutMs: number;
  /** Largest body accepted, in bytes; the body is cut there while it streams. */
  readonly maxBytes: number;
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Drops a body we will not read; undici's stream emits an error when destroyed, which must not go uncaught. */
function drop(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function tooLarge(maxBytes: number): JwksFetchError {
  return new JwksFetchError('too_large', `the answer is larger than ${maxBytes} bytes (auth.jwksMaxBytes)`);
}

/**
 * GETs a JWKS document and parses it as JSON. One deadline covers connect, head and body (undici's
 * own time-outs measure gaps, so a drip-fed body would never trip them). Redirects are not followed
 * (undici's request follows none): a key set moved elsewhere is a configuration matter. The body is
 * counted as it streams and cut at `maxBytes`, so an endless answer costs at most that much memory.
 */
export async function fetchJwksJson(url: string, options: JwksFetchOptions): Promise<unknown> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  try {
    const res = await undici().request(url, {
      method: 'GET',
      headers: { accept: 'application/jwk-set+json, application/json' },
      signal: controller.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      // Fetches are at least auth.jwksCooldownMs apart: a kept-alive connection would only go stale.
      reset: true,
    });
    if (res.statusCode !== 200) {
      drop(res.body);
      const redirect = res.statusCode >= 300 && res.statusCode < 400 ? ' (redirects are not followed)' : '';
      throw new JwksFetchError('http_status', `HTTP ${res.statusCode}${redirect}`);
    }
    if (Number(res.headers['content-length']) > options.maxBytes) {
      drop(res.body);
      throw tooLarge(options.maxBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > options.maxBytes) {
        drop(res.body);
        throw tooLarge(options.maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
    try {
      return JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as unknown;
    } catch (err) {
      const type = res.headers['content-type'];
      throw new JwksFetchError('not_json', `the answer is not JSON${typeof type === 'string' ? ` (content-type ${type.split(';', 1)[0]})` : ''}`, err);
    }
  } catch (err) {
    if (err instanceof JwksFetchError) throw err;
    const code = codeOf(err);
    // Our deadline, or undici's own head/body time-outs set to the same value: whichever fires first.
    if (timedOut || UNDICI_TIMEOUTS.has(code ?? '')) throw new JwksFetchError('timeout', `no complete answer within ${options.timeoutMs} ms`, err);
    if (code === 'ECONNREFUSED') throw new JwksFetchError('refused', 'connection refused', err);
    throw new JwksFetchError('unreachable', `cannot be reached (${code ?? (err as Error).message})`, err);
  } finally {
    clearTimeout(timer);
  }
}
