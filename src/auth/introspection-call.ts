import { Deadline } from '../lib/deadline.ts';
import { exchangeFailure, startExchange, type PlanBody } from '../lib/exchange.ts';
import { undici } from '../lib/undici.ts';
import type { IntrospectionResult } from '../observability/metrics.ts';

/** Why an introspection call gave no answer: always the endpoint's failure, never the client's (503, not 401). */
export class IntrospectionError extends Error {
  override readonly name = 'IntrospectionError';
  readonly result: Exclude<IntrospectionResult, 'active' | 'inactive'>;

  constructor(result: Exclude<IntrospectionResult, 'active' | 'inactive'>, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.result = result;
  }
}

/** An introspection answer (RFC 7662 section 2.2): a JSON object whose `active` is a boolean. */
export interface IntrospectionAnswer {
  readonly active: boolean;
  readonly [field: string]: unknown;
}

export interface IntrospectionCallOptions {
  readonly url: URL;
  /** The `Authorization` header of every call: HTTP Basic with the gateway's client credentials. */
  readonly authorization: string;
  /** One deadline over connect, response head and the whole body, in ms. */
  readonly timeoutMs: number;
  /** Largest answer accepted, in bytes; the body is cut there while it streams. */
  readonly maxBytes: number;
}

/**
 * RFC 6749 section 2.3.1: the client id and secret are form-encoded before they are joined and
 * base64-encoded (an id or secret with `:` or non-ASCII characters would otherwise be misread).
 */
export function basicCredentials(clientId: string, clientSecret: string): string {
  const form = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${form(clientId)}:${form(clientSecret)}`).toString('base64')}`;
}

/** A 200's body is read unless announced over the limit; any other answer is dropped unread. */
const planAnswer: PlanBody = (status, headers, limit) => (status === 200 && !(Number(headers['content-length']) > limit) ? 'keep' : 'refuse');

function isAnswer(value: unknown): value is IntrospectionAnswer {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { active?: unknown }).active === 'boolean';
}

/**
 * POSTs one token to the introspection endpoint (RFC 7662 section 2.1: form-encoded, with the
 * `access_token` hint) through the bounded exchange the key set fetch and upstream requests use
 * (lib/exchange.ts): one deadline over connect, head and body, the body cut at `maxBytes`, no
 * redirects. Connections are kept alive (undici's global pool): a busy gateway calls often. Any
 * answer but a 200 whose body is a JSON object with a boolean `active` is the endpoint's failure.
 * The token is in the request body only: no error or log line made here carries it.
 */
export async function introspect(token: string, options: IntrospectionCallOptions): Promise<IntrospectionAnswer> {
  const deadline = new Deadline(options.timeoutMs, 'the introspection call passed its deadline');
  const { url } = options;
  try {
    const res = await startExchange(
      undici().getGlobalDispatcher(),
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'POST',
        headers: ['content-type', 'application/x-www-form-urlencoded', 'accept', 'application/json', 'authorization', options.authorization],
        body: `token=${encodeURIComponent(token)}&token_type_hint=access_token`,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      },
      options.maxBytes,
      planAnswer,
      deadline,
    ).answer;
    if (res.status !== 200) throw new IntrospectionError('http_status', `HTTP ${res.status}`);
    if (res.body === null) throw new IntrospectionError('too_large', `the answer is larger than ${options.maxBytes} bytes (auth.introspection.maxBytes)`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body.toString('utf8'));
    } catch (err) {
      throw new IntrospectionError('malformed', 'the answer is not JSON', err);
    }
    if (!isAnswer(parsed)) throw new IntrospectionError('malformed', 'the answer is not a JSON object with a boolean "active"');
    return parsed;
  } catch (err) {
    if (err instanceof IntrospectionError) throw err;
    const failure = exchangeFailure(err, deadline);
    if (failure === 'timeout') throw new IntrospectionError('timeout', `no complete answer within ${options.timeoutMs} ms`, err);
    if (failure === 'refused') throw new IntrospectionError('refused', 'connection refused', err);
    throw new IntrospectionError('unreachable', `cannot be reached (${(err as Error).message})`, err);
  } finally {
    deadline.clear();
  }
}
