import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import type { ClaimTable } from '../auth/claims.ts';
import { headerValueOf } from '../config/service-checks.ts';
import type { UpstreamConfig } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import type { UpstreamObserver, UpstreamOutcome } from '../observability/metrics.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { CircuitBreaker, PROBE } from './breaker.ts';
import type { UpstreamCall } from './call.ts';
import { freshnessOf, type UpstreamFreshness } from './cache-control.ts';
import { Exchange, type Answer, type BodyPlan, type PlanBody } from './exchange.ts';
import { undici } from './undici.ts';

/**
 * An upstream answer as the resource layer sees it: the decoded body, its freshness and its
 * validator (the upstream's ETag, or null), or "no such resource".
 */
export type UpstreamResult<T> =
  | { readonly found: true; readonly value: T; readonly freshness: UpstreamFreshness; readonly ageSeconds: number; readonly etag: string | null }
  | { readonly found: false };

/** A write request: its body (sent byte for byte as validated) and the conditions to forward. */
export interface WriteRequest {
  readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly body?: Buffer | undefined;
  readonly contentType?: string | undefined;
  /** If-Match as the upstream must see it: its own validators, or "*". */
  readonly ifMatch?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

/** What the upstream answered to a write: its status, validator, and body when it sent one. */
export interface WriteResult {
  readonly status: number;
  readonly etag: string | null;
  readonly freshness: UpstreamFreshness;
  /** The parsed body of a JSON answer, undefined for none. */
  readonly json: unknown;
  /** The body was application/problem+json: its own `detail` may be shown (RFC 9457). */
  readonly problem: boolean;
}

/** A strong or weak entity-tag as RFC 9110 section 8.8.3 spells it; anything else is ignored. */
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

function etagOf(value: string | string[] | undefined): string | null {
  return typeof value === 'string' && ENTITY_TAG.test(value) ? value : null;
}

/**
 * Turns the upstream's JSON into what the caller needs, inside the attempt: a decoder that throws
 * (an invalid record, an id that does not match) makes the attempt a `bad_body` in the metrics,
 * not an `ok` followed by a 502.
 */
export type Decode<T> = (json: unknown) => T;

/** Naming and forwarding for one service (everything but its connection settings). */
export interface ServiceOptions {
  /** The service's name: "upstream" for the default one. */
  readonly name: string;
  /** The claims verified tokens keep, to find those forwardClaims names. */
  readonly claims: ClaimTable;
  /** Where `{"env": NAME}` header values are read (at construction, once). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Sets `name` (lower case) in a flat [name, value, ...] header list, in place of any value it has. */
function setHeader(headers: string[], name: string, value: string): void {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === name) {
      headers[i + 1] = value;
      return;
    }
  }
  headers.push(name, value);
}

function badGateway(detail: string, cause?: unknown): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail, cause });
}

function isJsonContentType(value: string | string[] | undefined): boolean {
  if (typeof value !== 'string') return false;
  const type = value.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * A read's body: a 200's JSON is kept unless announced over the limit; a non-JSON 200 is refused
 * (the connection dropped rather than read); any other status is drained and the connection kept.
 */
const planRead: PlanBody = (status, headers, limit): BodyPlan => {
  if (status !== 200) return 'drain';
  return isJsonContentType(headers['content-type']) && !(Number(headers['content-length']) > limit) ? 'keep' : 'refuse';
};

/** A write's body: JSON is kept (refused when announced over the limit); anything else, or none, is drained. */
const planWrite: PlanBody = (status, headers, limit): BodyPlan => {
  const declared = Number(headers['content-length']);
  if (!isJsonContentType(headers['content-type']) || declared === 0 || status === 204) return 'drain';
  return declared > limit ? 'refuse' : 'keep';
};

/**
 * One deadline over every attempt of a request: when it passes, the exchange in flight fails with
 * a time-out. Passed to setTimeout as an argument, so arming it allocates no closure.
 */
interface Deadline {
  passed: boolean;
  current: Exchange | null;
}

function passDeadline(deadline: Deadline): void {
  deadline.passed = true;
  deadline.current?.abort(new Error('the upstream request passed its deadline'));
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** The connection failed under the request: refused, or reset/closed by the other side. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What one attempt did: for the metrics, the breaker and the retry decision. */
interface Attempt {
  outcome: UpstreamOutcome;
  /** The upstream's status code, 0 before the response head arrived. */
  status: number;
}

/** Connection failures, time-outs and 5xx answers count against the breaker; any other answer is the upstream working. */
function isFailure(attempt: Attempt): boolean {
  return attempt.outcome === 'unreachable' || attempt.outcome === 'timeout' || attempt.status >= 500;
}

function unavailable(waitMs: number, who: string): HgError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new HgError('HG_ERR_UPSTREAM_UNAVAILABLE', {
    detail: `${who} is failing, so requests to it are paused; try again in ${seconds} s.`,
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * One upstream service over an undici pool with keep-alive. Every request has one
 * deadline covering connect, headers and the whole body, and any retry: undici's bodyTimeout alone
 * only measures the gaps between chunks, so a drip-fed body would never trip it. Redirects are
 * never followed. A circuit breaker (kept as long as this client is) fails requests fast while the
 * upstream is down.
 */
export class UpstreamClient {
  /** Made on the first request (undici loads then: see undici.ts). */
  #pooled: Pool | null = null;
  /** close() was called: no pool may be made after it (one made then would never be closed). */
  #closed = false;
  readonly #poolOptions: Pool.Options;
  readonly #basePath: string;
  readonly #timeoutMs: number;

  /** The one deadline of a request to this service, in ms (upstream.timeoutMs). */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }
  readonly #maxBytes: number;
  readonly origin: string;
  readonly #observer: UpstreamObserver | undefined;
  /** When an answer arrived: Expires without a Date is measured from it (cache-control.ts). */
  readonly #clock: Clock;
  readonly breaker: CircuitBreaker;
  /** The service's name, as metrics and messages say it. */
  readonly name: string;
  /** How problems refer to the service: "The upstream service" or 'The upstream service "catalogue"'. */
  readonly who: string;
  /**
   * accept plus the configured fixed headers as undici's flat [name, value, ...] list, built once;
   * each request copies it. Not an object: V8 (Node 20) gives `{ ...base }` with a property added
   * a hidden class of its own each time once the code is optimised, so every request made a map,
   * a descriptor array and an enumeration cache in the old generation (bench/RESULTS.md, memory).
   */
  readonly #baseHeaders: readonly string[];
  readonly #forwardAuthorization: boolean;
  /** [header name, index into the principal's kept claims] per forwardClaims entry. */
  readonly #forwardClaims: readonly (readonly [string, number])[];

  constructor(config: UpstreamConfig, url: string, observer?: UpstreamObserver, clock: Clock = systemClock, options?: ServiceOptions) {
    this.#observer = observer;
    this.#clock = clock;
    this.name = options?.name ?? 'upstream';
    this.who = this.name === 'upstream' ? 'The upstream service' : `The upstream service "${this.name}"`;
    const env = options?.env ?? process.env;
    const fixed: Record<string, string> = { accept: 'application/json' };
    // Validated at start (config/service-checks.ts): names are tokens, values are set and clean.
    for (const [header, value] of Object.entries(config.headers)) fixed[header.toLowerCase()] = headerValueOf(value, env) ?? '';
    this.#baseHeaders = Object.entries(fixed).flat();
    this.#forwardAuthorization = config.forwardAuthorization;
    const claims = options?.claims;
    // By lower-case name, the last one winning, as the headers object they were written into did.
    const forwarded = new Map<string, number>();
    if (claims !== undefined) for (const [header, claim] of Object.entries(config.forwardClaims)) forwarded.set(header.toLowerCase(), claims.indexOf(claim));
    this.#forwardClaims = [...forwarded];
    this.breaker = new CircuitBreaker(config.breaker, clock);
    const base = new URL(url);
    this.origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#timeoutMs = config.timeoutMs;
    this.#maxBytes = config.maxResponseBytes;
    this.#poolOptions = {
      connections: config.connections,
      pipelining: 1,
      keepAliveTimeout: 4000, // 4 s idle, under Node's 5 s server default so we close first
      connect: { timeout: config.timeoutMs },
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
    };
  }

  get #pool(): Pool {
    return this.#pooled ?? this.#open();
  }

  /** The pool, on the first request; refused once closed, as a closed pool refuses (mapped to a 502). */
  #open(): Pool {
    const { Pool: PoolClass, errors } = undici();
    if (this.#closed) throw new errors.ClientClosedError();
    this.#pooled = new PoolClass(this.origin, this.#poolOptions);
    return this.#pooled;
  }

  /**
   * GET <base><path>, where `path` was built from validated parts only. A GET is idempotent, so one
   * that meets a refused or reset connection before its response head is sent once more (on
   * another connection: undici drops the failed one), within the same deadline and only if the
   * breaker lets it; each failed attempt counts against the breaker, so retries cannot storm.
   */
  async getJson<T>(path: string, call: UpstreamCall | undefined, decode: Decode<T>): Promise<UpstreamResult<T>> {
    const headers = this.#headersFor(call);
    return this.#run(true, (deadline, seen) => this.#get(path, headers, deadline, seen, decode));
  }

  /**
   * A write: `method` on <base><path> with the body and the client's conditions. POST and PATCH are
   * never sent twice (RFC 9110 section 9.2.2: not idempotent); PUT and DELETE are, like GET, once
   * more after a refused or reset connection before any answer. Every answer the upstream gives
   * comes back as it is (the caller maps statuses); failures to get one are typed errors.
   */
  async send(path: string, call: UpstreamCall | undefined, write: WriteRequest): Promise<WriteResult> {
    const headers = this.#headersFor(call);
    if (write.contentType !== undefined) headers.push('content-type', write.contentType);
    // The configured headers may name these two (only the managed ones are refused): the write's own win.
    if (write.ifMatch !== undefined) setHeader(headers, 'if-match', write.ifMatch);
    if (write.idempotencyKey !== undefined) setHeader(headers, 'idempotency-key', write.idempotencyKey);
    const idempotent = write.method === 'PUT' || write.method === 'DELETE';
    return this.#run(idempotent, (deadline, seen) => this.#write(path, headers, write, deadline, seen));
  }

  /**
   * One request under the breaker and one deadline covering every attempt. `retryable`: a refused
   * or reset connection before the response head is tried once more (on another connection: undici
   * drops the failed one), only if the breaker lets it; each failed attempt counts against it.
   */
  async #run<R>(retryable: boolean, attemptOnce: (deadline: Deadline, seen: Attempt) => Promise<R>): Promise<R> {
    let admitted = this.breaker.admit();
    if (admitted > 0) {
      this.#observer?.upstreamResult(this.name, 'rejected', 0);
      throw unavailable(admitted, this.who);
    }
    const deadline: Deadline = { passed: false, current: null };
    const timer = setTimeout(passDeadline, this.#timeoutMs, deadline);
    try {
      for (let attempt = 1; ; attempt++) {
        const seen: Attempt = { outcome: 'unreachable', status: 0 };
        const started = performance.now();
        try {
          const result = await attemptOnce(deadline, seen);
          this.#settle(seen, started, admitted === PROBE);
          return result;
        } catch (err) {
          const mapped = this.#map(err, deadline.passed, seen);
          this.#settle(seen, started, admitted === PROBE);
          if (retryable && attempt === 1 && seen.status === 0 && !deadline.passed && CONNECTION_ERRORS.has(codeOf(err) ?? '')) {
            admitted = this.breaker.admit();
            if (admitted <= 0) {
              this.#observer?.upstreamRetry(this.name);
              continue;
            }
          }
          throw mapped;
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  #settle(attempt: Attempt, started: number, probe: boolean): void {
    this.#observer?.upstreamResult(this.name, attempt.outcome, performance.now() - started);
    if (isFailure(attempt)) this.breaker.failed(probe);
    else this.breaker.succeeded(probe);
  }

  /** Any failure of an attempt as the typed error a client may see; sets the attempt's outcome. */
  #map(err: unknown, deadlinePassed: boolean, seen: Attempt): HgError {
    if (deadlinePassed || UNDICI_TIMEOUTS.has(codeOf(err) ?? '')) {
      seen.outcome = 'timeout';
      return new HgError('HG_ERR_UPSTREAM_TIMEOUT', { detail: `${this.who} did not answer within ${this.#timeoutMs} ms.`, cause: err });
    }
    if (err instanceof HgError) return err;
    // Refused, reset, or the connection lost during the body.
    seen.outcome = 'unreachable';
    return badGateway(`${this.who} could not be reached.`, err);
  }

  /** The headers of one request: the fixed ones, our request id and trace context, and what this service is configured to receive. */
  #headersFor(call: UpstreamCall | undefined): string[] {
    // The names pushed here are managed (config/service-checks.ts): no configured header has them.
    const headers = this.#baseHeaders.slice();
    if (call === undefined) return headers;
    headers.push('x-request-id', call.requestId);
    if (call.traceparent !== undefined) {
      headers.push('traceparent', call.traceparent);
      if (call.tracestate !== undefined) headers.push('tracestate', call.tracestate);
    }
    if (this.#forwardAuthorization && call.authorization !== undefined) headers.push('authorization', call.authorization);
    for (const [header, index] of this.#forwardClaims) {
      const value = call.claims?.[index];
      // A claim that is absent, or not a string or number, sends no header (ClaimTable.keep).
      if (value !== undefined) headers.push(header, String(value));
    }
    return headers;
  }

  /**
   * Sends one request under `deadline` and waits for its answer; the attempt's status is the
   * answer's (0 if none came), and its outcome `bad_body` until the caller says otherwise.
   */
  async #exchange(method: string, path: string, headers: string[], body: Buffer | undefined, plan: PlanBody, deadline: Deadline, seen: Attempt): Promise<Answer> {
    const exchange = new Exchange(this.#maxBytes, plan);
    deadline.current = exchange;
    this.#pool.dispatch({ path: this.#basePath + path, method, headers, body }, exchange);
    try {
      const answer = await exchange.answer;
      seen.outcome = 'bad_body';
      return answer;
    } finally {
      seen.status = exchange.status;
    }
  }

  async #get<T>(path: string, headers: string[], deadline: Deadline, seen: Attempt, decode: Decode<T>): Promise<UpstreamResult<T>> {
    const res = await this.#exchange('GET', path, headers, undefined, planRead, deadline, seen);
    if (res.status === 404) {
      seen.outcome = 'not_found';
      return { found: false };
    }
    if (res.status !== 200) {
      seen.outcome = 'bad_status';
      throw badGateway(`${this.who} answered with status ${res.status}.`);
    }
    if (!isJsonContentType(res.headers['content-type'])) throw badGateway(`${this.who} answered with a body that is not JSON.`);
    if (res.body === null) throw this.#tooLarge();
    // Still 'bad_body' if the body is not JSON or the decoder refuses the record.
    const value = decode(this.#parse(res.body));
    const age = Number(res.headers['age']);
    seen.outcome = 'ok';
    return {
      found: true,
      value,
      freshness: freshnessOf(res.headers, this.#clock.now()),
      ageSeconds: Number.isInteger(age) && age > 0 ? age : 0,
      etag: etagOf(res.headers['etag']),
    };
  }

  /** A write's answer, whatever its status; a JSON body (up to maxResponseBytes) is parsed, any other is dropped. */
  async #write(path: string, headers: string[], write: WriteRequest, deadline: Deadline, seen: Attempt): Promise<WriteResult> {
    const res = await this.#exchange(write.method, path, headers, write.body, planWrite, deadline, seen);
    // 5xx counts against the breaker; 4xx is the upstream working (it refused the change).
    seen.outcome = res.status >= 500 ? 'bad_status' : res.status === 404 ? 'not_found' : 'bad_body';
    let json: unknown;
    if (planWrite(res.status, res.headers, this.#maxBytes) !== 'drain') {
      if (res.body === null) throw this.#tooLarge();
      json = res.body.length === 0 ? undefined : this.#parse(res.body);
    }
    if (res.status < 500) seen.outcome = res.status === 404 ? 'not_found' : 'ok';
    const type = res.headers['content-type'];
    const problem = typeof type === 'string' && type.split(';', 1)[0]?.trim().toLowerCase() === 'application/problem+json';
    return { status: res.status, etag: etagOf(res.headers['etag']), freshness: freshnessOf(res.headers, this.#clock.now()), json, problem };
  }

  #tooLarge(): HgError {
    return badGateway(`${this.who} answered with a body larger than allowed.`);
  }

  #parse(body: Buffer): unknown {
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw badGateway(`${this.who} answered with invalid JSON.`, err);
    }
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.#pooled === null ? Promise.resolve() : this.#pooled.close();
  }
}
