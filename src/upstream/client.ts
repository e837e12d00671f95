import { performance } from 'node:perf_hooks';
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { ClaimTable, ClaimValue } from '../auth/claims.ts';
import type { UpstreamConfig } from '../config/types.ts';
import { CircuitBreaker, PROBE } from '../lib/breaker.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { Deadline } from '../lib/deadline.ts';
import type { HgError } from '../lib/errors.ts';
import { exchangeFailure, startExchange, type Answer, type PlanBody } from '../lib/exchange.ts';
import type { UpstreamObserver } from '../observability/metrics.ts';
import type { RequestTrace } from '../observability/tracing.ts';
import { planRead, planWrite, readResult, writeResult, type Decode, type UpstreamResult, type WriteResult } from './answer.ts';
import { Attempt, attemptError, unavailable } from './attempt.ts';
import { Balancer } from './balancer.ts';
import type { UpstreamCall } from './call.ts';
import { failureLog, withLog } from './failure-log.ts';
import { HealthProbes } from './health-probe.ts';
import { RequestHeaders, setHeader } from './request-headers.ts';
import { serviceTargets, type Target } from './target.ts';

// The client's surface: what its callers read and pass.
export type { Decode, UpstreamResult, WriteResult };
export type { WriteRequest } from './write-request.ts';
import type { WriteRequest } from './write-request.ts';

/** Naming and forwarding for one service (everything but its connection settings). */
export interface ServiceOptions {
  /** The service's name: "upstream" for the default one. */
  readonly name: string;
  /** The claims verified tokens keep, to find those forwardClaims names. */
  readonly claims: ClaimTable;
  /** Where `{"env": NAME}` header values are read (at construction, once). */
  readonly env?: NodeJS.ProcessEnv;
  /** server.trustProxy: whose X-Forwarded-* a `forwarded` service's headers believe. */
  readonly trustProxy?: readonly string[];
  /** The TLS settings of its `https` targets, files already read (tls.ts). */
  readonly tls?: Readonly<ConnectionOptions>;
}

/** Why an exchange in flight was aborted; the cause of the 504 it becomes. */
const DEADLINE_PASSED = 'the upstream request passed its deadline';

/**
 * One upstream service over an undici pool with keep-alive. Every request has one deadline
 * covering connect, headers and the whole body, and any retry: undici's bodyTimeout alone only
 * measures the gaps between chunks, so a drip-fed body would never trip it. Redirects are never
 * followed. A circuit breaker (kept as long as this client is) fails requests fast while the
 * upstream is down.
 *
 * A request is composed of small pieces, outermost first: the breaker's admission
 * (lib/breaker.ts), the deadline (lib/deadline.ts), the attempts and the retry rule (attempt.ts),
 * the bounded exchange (lib/exchange.ts), then the answer's decoding (answer.ts); the headers are
 * assembled apart (request-headers.ts). They are not undici interceptors (Dispatcher.compose):
 * the deadline spans every attempt and must settle a request still queued in the pool, the
 * breaker counts an attempt by its decoded outcome (a 200 whose body does not decode is a
 * failure of the attempt, not of the connection), and the retry asks the breaker first; an
 * interceptor sees none of that, and compose adds a Proxy in front of every dispatch and a
 * handler object per request and layer. undici's retry interceptor also retries on statuses and
 * with back-off, which this client must not do.
 */
export class UpstreamClient {
  /** The service's targets (one for a `url`), each with its pool, and which one a request goes to. */
  readonly balancer: Balancer;
  readonly #basePath: string;
  readonly #timeoutMs: number;

  /** The path of the service's URL (without a trailing `/`), which every request path follows. */
  get basePath(): string {
    return this.#basePath;
  }

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
  /** Its open breaker makes the gateway not ready (upstream.critical). */
  readonly critical: boolean;
  /** How problems a client sees refer to it, whichever it is: its name is internal (failure-log.ts). */
  readonly who = 'The upstream service';
  readonly #headers: RequestHeaders;
  readonly exposeHeaders: readonly string[]; // passed to the client, as configured (answer.ts exposedHeaders)
  /** The active health check (healthCheck.path set), else null. */
  readonly #probes: HealthProbes | null;

  constructor(config: UpstreamConfig, url: string, observer?: UpstreamObserver, clock: Clock = systemClock, options?: ServiceOptions) {
    this.#observer = observer;
    this.#clock = clock;
    this.name = options?.name ?? 'upstream';
    this.critical = config.critical;
    this.exposeHeaders = config.exposeHeaders;
    this.#headers = new RequestHeaders(config, options?.claims, options?.env ?? process.env, options?.trustProxy);
    this.breaker = new CircuitBreaker(config.breaker, clock);
    const targets = serviceTargets(config, url, options?.tls ?? {});
    // Every target has the same path (config validation), so the first one's is the service's.
    const base = new URL((targets[0] ?? { url }).url);
    this.origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#timeoutMs = config.timeoutMs;
    this.#maxBytes = config.maxResponseBytes;
    this.balancer = new Balancer(targets, config, clock, (target, forMs) => this.#observer?.targetEjected(this.name, target.origin, forMs));
    const check = config.healthCheck;
    const probePath = check === null ? null : check.path;
    this.#probes =
      check === null || probePath === null ? null : new HealthProbes(this.name, this.balancer, { ...check, path: probePath }, this.#basePath, observer);
  }

  /** Does this service receive claims (forwardClaims)? */
  get forwardsClaims(): boolean {
    return this.#headers.forwardsClaims;
  }

  /**
   * The 400 when a kept claim this service is sent cannot be forwarded (too long, not Unicode),
   * else null: asked before a load is started or joined, so a load never fails for one caller's claim.
   */
  claimProblem(claims: readonly ClaimValue[] | undefined): HgError | null {
    return this.#headers.claimProblem(claims);
  }

  /**
   * GET <base><path>, where `path` was built from validated parts only. A GET is idempotent, so one
   * that meets a refused or reset connection before its response head is sent once more (on
   * another connection: undici drops the failed one), within the same deadline and only if the
   * breaker lets it; each failed attempt counts against the breaker, so retries cannot storm.
   */
  async getJson<T>(path: string, call: UpstreamCall | undefined, decode: Decode<T>): Promise<UpstreamResult<T>> {
    const options: Dispatcher.DispatchOptions = { path: this.#basePath + path, method: 'GET', headers: this.#headers.of(call), body: undefined };
    const authorized = this.#headers.authorizes(call);
    return this.#run(true, call?.trace, async (attempt) => {
      const res = await this.#exchange(options, planRead, attempt);
      attempt.outcome = res.status === 404 ? 'not_found' : res.status === 200 ? 'bad_body' : 'bad_status';
      // Still 'bad_body' if the body is not JSON or the decoder refuses the record.
      const result = readResult(res, decode, this.who, this.#clock, authorized, this.exposeHeaders);
      if (result.found) attempt.outcome = 'ok';
      return result;
    });
  }

  /**
   * A write: `method` on <base><path> with the body and the client's conditions. POST and PATCH are
   * never sent twice (RFC 9110 section 9.2.2: not idempotent); PUT and DELETE are, like GET, once
   * more after a refused or reset connection before any answer. Every answer the upstream gives
   * comes back as it is (the caller maps statuses); failures to get one are typed errors.
   */
  async send(path: string, call: UpstreamCall | undefined, write: WriteRequest): Promise<WriteResult> {
    const headers = this.#headers.of(call);
    if (write.contentType !== undefined) headers.push('content-type', write.contentType);
    // The configured headers may name these (only the managed ones are refused): the write's own win.
    if (write.ifMatch !== undefined) setHeader(headers, 'if-match', write.ifMatch);
    if (write.ifNoneMatch !== undefined) setHeader(headers, 'if-none-match', write.ifNoneMatch);
    if (write.ifUnmodifiedSince !== undefined) setHeader(headers, 'if-unmodified-since', write.ifUnmodifiedSince);
    if (write.idempotencyKey !== undefined) setHeader(headers, 'idempotency-key', write.idempotencyKey);
    const options: Dispatcher.DispatchOptions = { path: this.#basePath + path, method: write.method, headers, body: write.body };
    const idempotent = write.method === 'PUT' || write.method === 'DELETE';
    const authorized = this.#headers.authorizes(call);
    return this.#run(idempotent, call?.trace, async (attempt) => {
      const res = await this.#exchange(options, planWrite, attempt);
      const result = writeResult(res, this.#maxBytes, this.#clock, authorized);
      // 5xx counts against the breaker; 4xx is the upstream working (it refused the change); a body
      // that cannot be read is the upstream failing, as it is for a read.
      attempt.outcome = res.status >= 500 ? 'bad_status' : result.unreadable !== null ? 'bad_body' : res.status === 404 ? 'not_found' : 'ok';
      // An answer that is no success may become a 502 (write-upstream.ts refusal), logged with what the service answered.
      return res.status < 300 ? result : { ...result, log: failureLog(this.name, res.status, res, this.#headers.secrets) };
    });
  }

  /**
   * One request under the breaker and one deadline covering every attempt. `idempotent`: a refused
   * or reset connection before the response head is tried once more (Attempt.mayRetry), only if
   * the breaker lets it; each failed attempt counts against it.
   */
  async #run<R>(idempotent: boolean, trace: RequestTrace | undefined, attemptOnce: (attempt: Attempt) => Promise<R>): Promise<R> {
    let admitted = this.breaker.admit();
    if (admitted > 0) {
      this.#observer?.upstreamResult(this.name, 'rejected', 0);
      throw withLog(unavailable(admitted, this.who), { service: this.name });
    }
    const attempt = new Attempt(new Deadline(this.#timeoutMs, DEADLINE_PASSED), trace);
    try {
      for (;;) {
        // A retry goes to another target when there is one (Balancer.pick avoids the one that failed).
        attempt.begin(this.balancer.pick(attempt.target));
        try {
          const result = await attemptOnce(attempt);
          this.#settle(attempt, admitted === PROBE);
          return result;
        } catch (err) {
          const failure = exchangeFailure(err, attempt.deadline);
          const mapped = attemptError(err, failure, attempt, this.who, this.#timeoutMs);
          // The request's log line says which service failed, and what it answered.
          withLog(mapped, failureLog(this.name, attempt.status, attempt.answer, this.#headers.secrets));
          this.#settle(attempt, admitted === PROBE);
          if (attempt.mayRetry(idempotent, failure)) {
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
      attempt.deadline.clear();
    }
  }

  #settle(attempt: Attempt, probe: boolean): void {
    this.#observer?.upstreamResult(this.name, attempt.outcome, performance.now() - attempt.startedMs);
    attempt.endSpan();
    if (attempt.failed) this.breaker.failed(probe);
    else this.breaker.succeeded(probe);
    // The target's own health and metrics: a service of one target has nothing to weigh.
    if (this.balancer.single) return;
    const target = attempt.target as Target;
    this.balancer.settled(target, attempt.outcome, attempt.status);
    this.#observer?.targetResult(this.name, target.origin, attempt.outcome, performance.now() - attempt.startedMs);
  }

  /**
   * Sends one request under the attempt's deadline and waits for its answer; the attempt's status
   * is the answer's (0 if none came), and its outcome `bad_body` until the caller says otherwise.
   */
  async #exchange(options: Dispatcher.DispatchOptions, plan: PlanBody, attempt: Attempt): Promise<Answer> {
    const target = attempt.target as Target;
    const exchange = startExchange(target.pool(), attempt.traced(options, target.origin), this.#maxBytes, plan, attempt.deadline);
    target.outstanding++;
    try {
      const answer = await exchange.answer;
      attempt.outcome = 'bad_body';
      attempt.answer = answer;
      return answer;
    } finally {
      target.outstanding--;
      attempt.status = exchange.status;
    }
  }

  /** Closes every target's pool; the requests under way finish. */
  async close(): Promise<void> {
    this.#probes?.stop();
    await Promise.all(this.balancer.targets.map((target) => target.close()));
  }
}
