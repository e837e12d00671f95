import type { Dispatcher } from 'undici';
import type { Deadline } from './deadline.ts';

/** Response header fields as undici gives them: a field sent on several lines is an array. */
export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * What becomes of a response's body once its head is in:
 * - `keep`: read it, up to the byte limit, and hand it over;
 * - `drain`: read and drop it (a 404, a status we refuse), so the connection stays reusable, but
 *   for its first SAMPLE_BYTES (a failed answer's body is logged); the head is the answer, so a
 *   drained body that breaks off (reset, deadline) still settles with it;
 * - `refuse`: drop the connection now (a body we will not read: not JSON, or announced too large).
 */
export type BodyPlan = 'keep' | 'drain' | 'refuse';

/** How much of a drained body is kept: enough for a log line's snippet of it, after redaction. */
export const SAMPLE_BYTES = 1024;

/** Decides a response's plan from its head; `limit` is the most bytes its body may have. */
export type PlanBody = (status: number, headers: ResponseHeaders, limit: number) => BodyPlan;

/**
 * The response as one settled value. `body` is the whole body when the plan kept it and it stayed
 * within the limit, and null otherwise (drained, refused, or cut off at the limit): a caller that
 * wanted it and gets null knows the body was too large or refused.
 */
export interface Answer {
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly body: Buffer | null;
  /** The first SAMPLE_BYTES of a drained body; null (or absent) otherwise. */
  readonly sample?: Buffer | null;
  /** Bytes of body received (all of them when drained; up to the limit otherwise); absent: the body's length. */
  readonly bodyBytes?: number;
}

const NO_HEADERS: ResponseHeaders = {};

/** Why we dropped a connection ourselves; undici reports it back, and we have already settled. */
class Dropped extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'Dropped';
  }
}
const REFUSED = new Dropped('response refused from its head');
const OVER_LIMIT = new Dropped('response body over the limit');

/**
 * One request and its response as an undici dispatch handler. `request()` wraps every call in an
 * AbortSignal with its listeners, a Readable body stream and, to read it, an async iterator: on a
 * cache miss those were ~6 µs of the gateway's CPU and much of its garbage (the `spread` profile in
 * bench/RESULTS.md). Here the head and the body arrive as callbacks and settle one promise.
 *
 * `abort(reason)` (the request's deadline) settles at once with that reason and drops the
 * connection, even while the request still waits in the pool for one: it is then dropped as soon
 * as it starts. A body being drained is the exception: its head already answered, so an abort or
 * a connection error during the drain settles with that head (as request()'s dump() did) and the
 * connection is dropped. Every callback after the answer settled is ignored.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  /** The response's status once its head arrived, 0 before. */
  status = 0;
  #resolve!: (answer: Answer) => void;
  #reject!: (reason: Error) => void;
  #settled = false;
  #controller: Dispatcher.DispatchController | null = null;
  #abortedWith: Error | null = null;
  #headers: ResponseHeaders = NO_HEADERS;
  /** The plan for the body once the head is in (null before): `drain` makes the head the answer whatever the body does. */
  #bodyPlan: BodyPlan | null = null;
  /** The first bytes of a drained body (null for another plan). */
  #sample: Buffer[] | null = null;
  #sampled = 0;
  #chunks: Buffer[] = [];
  #size = 0;
  readonly #limit: number;
  readonly #plan: PlanBody;

  constructor(limit: number, plan: PlanBody) {
    this.#limit = limit;
    this.#plan = plan;
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Fails the exchange with `reason` and drops its connection (now, or when it gets one); while a body drains, settles with its head instead. */
  abort(reason: Error): void {
    if (this.#settled) return;
    if (this.#bodyPlan === 'drain') {
      this.#finish(null);
      this.#controller?.abort(reason);
      return;
    }
    this.#settled = true;
    this.#abortedWith = reason;
    this.#reject(reason);
    this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortedWith !== null) controller.abort(this.#abortedWith);
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: ResponseHeaders): void {
    // An informational answer (103 Early Hints) comes before the real one: undici reports both.
    if (this.#settled || status < 200) return;
    this.status = status;
    this.#headers = headers;
    const plan = this.#plan(status, headers, this.#limit);
    if (plan === 'refuse') {
      this.#finish(null);
      controller.abort(REFUSED);
      return;
    }
    this.#bodyPlan = plan;
    if (plan === 'drain') this.#sample = [];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    if (this.#size > this.#limit) {
      this.#finish(null);
      controller.abort(OVER_LIMIT);
      return;
    }
    if (this.#bodyPlan === 'keep') this.#chunks.push(chunk);
    else if (this.#sample !== null && this.#sampled < SAMPLE_BYTES) {
      // A copy: undici may reuse the chunk's memory once this returns.
      const part = Buffer.from(chunk.subarray(0, SAMPLE_BYTES - this.#sampled));
      this.#sample.push(part);
      this.#sampled += part.length;
    }
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    if (this.#bodyPlan !== 'keep') return this.#finish(null);
    const chunks = this.#chunks;
    // One chunk (the common case for a small record) is handed over as it is: no copy.
    this.#finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#size));
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.#settled) return;
    if (this.#bodyPlan === 'drain') return this.#finish(null);
    this.#settled = true;
    this.#reject(error);
  }

  #finish(body: Buffer | null): void {
    this.#settled = true;
    this.#chunks = [];
    const sample = this.#sample === null ? null : Buffer.concat(this.#sample, this.#sampled);
    this.#resolve({ status: this.status, headers: this.#headers, body, sample, bodyBytes: this.#size });
  }
}

/**
 * Sends one request through `dispatcher` under `deadline` (which aborts it when it passes, even
 * while it waits in a pool for a connection), its body read by `plan` up to `limit` bytes. The
 * exchange's `answer` settles once; its `status` is the answer's, 0 while no head came. The
 * upstream client and the key set fetch both go through here, so they bound a wait and a body alike.
 */
export function startExchange(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, limit: number, plan: PlanBody, deadline: Deadline): Exchange {
  const exchange = new Exchange(limit, plan);
  deadline.current = exchange;
  dispatcher.dispatch(options, exchange);
  return exchange;
}

/** Why an exchange failed: time-out, connection refused, the TLS handshake, connection lost under it (reset, closed), or anything else. */
export type ExchangeFailure = 'timeout' | 'refused' | 'tls' | 'lost' | 'other';

/**
 * undici's own time-outs (connect, response head, the gap between body chunks). Set to the
 * deadline's length, they are a time-out too: whichever fires first.
 */
const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** The connection failed under the request: reset or closed by the other side. */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** An error's `code` (Node's system errors, undici's errors), if it has a string one. */
export function errorCodeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What an exchange's failure was, from its deadline and the error's code. */
export function exchangeFailure(err: unknown, deadline: Deadline): ExchangeFailure {
  const code = errorCodeOf(err) ?? '';
  if (deadline.passed || UNDICI_TIMEOUTS.has(code)) return 'timeout';
  if (code === 'ECONNREFUSED') return 'refused';
  if (isTlsFailure(code)) return 'tls';
  return CONNECTION_LOST.has(code) ? 'lost' : 'other';
}

/**
 * A TLS handshake's failure: Node's (ERR_TLS_*), OpenSSL's (ERR_SSL_*, alerts such as a client
 * certificate required) and the certificate checks' (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT,
 * UNABLE_TO_VERIFY_LEAF_SIGNATURE, ...).
 */
export function isTlsFailure(code: string): boolean {
  return code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || /CERT|SIGNATURE|ISSUER/.test(code);
}
