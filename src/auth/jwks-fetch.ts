import { Deadline } from '../lib/deadline.ts';
import { errorCodeOf, exchangeFailure, startExchange, type PlanBody } from '../lib/exchange.ts';
import { undici } from '../lib/undici.ts';
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

/** What we ask the key server for (RFC 7517 section 8.5.1), as undici's flat header list. */
const ACCEPT_KEY_SET = ['accept', 'application/jwk-set+json, application/json'];

/** A 200's body is read unless announced over the limit; any other answer is dropped unread (the connection with it). */
const planKeySet: PlanBody = (status, headers, limit) => (status === 200 && !(Number(headers['content-length']) > limit) ? 'keep' : 'refuse');

function tooLarge(maxBytes: number): JwksFetchError {
  return new JwksFetchError('too_large', `the answer is larger than ${maxBytes} bytes (auth.jwksMaxBytes)`);
}

/**
 * GETs a JWKS document and parses it as JSON, through the same bounded exchange as upstream
 * requests (lib/exchange.ts). One deadline covers connect, head and body (undici's own time-outs
 * measure gaps, so a drip-fed body would never trip them). Redirects are not followed (a dispatch
 * follows none): a key set moved elsewhere is a configuration matter. The body is counted as it
 * streams and cut at `maxBytes`, so an endless answer costs at most that much memory.
 */
export async function fetchJwksJson(url: string, options: JwksFetchOptions): Promise<unknown> {
  const deadline = new Deadline(options.timeoutMs, 'the key set fetch passed its deadline');
  try {
    const target = new URL(url);
    const res = await startExchange(
      undici().getGlobalDispatcher(),
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'GET',
        headers: ACCEPT_KEY_SET,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        // Fetches are at least auth.jwksCooldownMs apart: a kept-alive connection would only go stale.
        reset: true,
      },
      options.maxBytes,
      planKeySet,
      deadline,
    ).answer;
    if (res.status !== 200) {
      const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
      throw new JwksFetchError('http_status', `HTTP ${res.status}${redirect}`);
    }
    if (res.body === null) throw tooLarge(options.maxBytes);
    try {
      return JSON.parse(res.body.toString('utf8')) as unknown;
    } catch (err) {
      const type = res.headers['content-type'];
      throw new JwksFetchError('not_json', `the answer is not JSON${typeof type === 'string' ? ` (content-type ${type.split(';', 1)[0]})` : ''}`, err);
    }
  } catch (err) {
    if (err instanceof JwksFetchError) throw err;
    const failure = exchangeFailure(err, deadline);
    if (failure === 'timeout') throw new JwksFetchError('timeout', `no complete answer within ${options.timeoutMs} ms`, err);
    if (failure === 'refused') throw new JwksFetchError('refused', 'connection refused', err);
    throw new JwksFetchError('unreachable', `cannot be reached (${errorCodeOf(err) ?? (err as Error).message})`, err);
  } finally {
    deadline.clear();
  }
}
