import { performance } from 'node:perf_hooks';
import type { Deadline } from '../lib/deadline.ts';
import { HgError } from '../lib/errors.ts';
import { errorCodeOf, type Answer, type ExchangeFailure } from '../lib/exchange.ts';
import type { Dispatcher } from 'undici';
import type { UpstreamOutcome } from '../observability/metrics.ts';
import type { AttemptSpan, RequestTrace } from '../observability/tracing.ts';
import { badGateway } from './answer.ts';
import { withTraceHeaders } from './request-headers.ts';
import type { Target } from './target.ts';

/**
 * One request to a service across its attempts (made once per request: a miss or a write): its
 * one deadline, and what the attempt under way did, for the metrics, the breaker and the retry
 * decision. `begin` starts the next attempt.
 */
export class Attempt {
  readonly deadline: Deadline;
  /** How the attempt under way ended, as the metrics say it; the exchange and the decoding refine it. */
  outcome: UpstreamOutcome = 'unreachable';
  /** The upstream's status code, 0 before the response head arrived. */
  status = 0;
  /** When the attempt under way started (performance.now()). */
  startedMs = 0;
  /** 1 for the first attempt, 2 for the retry. */
  number = 0;
  /** The answer of the attempt under way once it came (its body or sample is logged if it failed). */
  answer: Answer | null = null;
  /** The request's trace (tracing.enabled), under which each attempt is a CLIENT span. */
  readonly #trace: RequestTrace | undefined;
  /** The span of the attempt under way, until it is settled. */
  #span: AttemptSpan | null = null;

  /** The target the attempt under way goes to (null before the first). */
  target: Target | null = null;

  constructor(deadline: Deadline, trace?: RequestTrace) {
    this.deadline = deadline;
    this.#trace = trace;
  }

  /**
   * The request this attempt sends: as it is without tracing; with it, under a new CLIENT span,
   * whose trace headers replace the caller's when the span is sampled (an unsampled span is never
   * exported, so the upstream must not be told of it).
   */
  traced(options: Dispatcher.DispatchOptions, origin: string): Dispatcher.DispatchOptions {
    if (this.#trace === undefined) return options;
    const span = this.#trace.attempt(options.method, new URL(options.path, origin), this.number - 1);
    this.#span = span;
    if (span.headers === null) return options;
    return { ...options, headers: withTraceHeaders(options.headers as string[], span.headers) };
  }

  /** Ends the attempt's span with its status and, for an attempt that got no usable answer, why. */
  endSpan(): void {
    const span = this.#span;
    if (span === null) return;
    this.#span = null;
    if (this.status > 0) span.set('http.response.status_code', this.status);
    const outcome = this.outcome;
    span.end(outcome === 'timeout' || outcome === 'unreachable' || outcome === 'bad_body' ? outcome : undefined);
  }

  begin(target: Target | null = null): void {
    this.target = target;
    this.outcome = 'unreachable';
    this.status = 0;
    this.answer = null;
    this.startedMs = performance.now();
    this.number++;
  }

  /** Connection failures, time-outs and 5xx answers count against the breaker; any other answer is the upstream working. */
  get failed(): boolean {
    return this.outcome === 'unreachable' || this.outcome === 'timeout' || this.status >= 500;
  }

  /**
   * May the attempt that failed with `failure` go once more? Only a request that may be sent twice
   * (`idempotent`), only its first attempt, and only when the connection was refused or lost before
   * the response head (undici drops that connection, so the retry takes another), within the
   * deadline. The breaker has its say too (the caller asks it).
   */
  mayRetry(idempotent: boolean, failure: ExchangeFailure): boolean {
    return idempotent && this.number === 1 && this.status === 0 && (failure === 'refused' || failure === 'lost');
  }
}

/** A failed attempt as the typed error a client may see, naming `who`; sets the attempt's outcome. */
export function attemptError(err: unknown, failure: ExchangeFailure, attempt: Attempt, who: string, timeoutMs: number): HgError {
  if (failure === 'timeout') {
    attempt.outcome = 'timeout';
    return new HgError('HG_ERR_UPSTREAM_TIMEOUT', { detail: `${who} did not answer within ${timeoutMs} ms.`, cause: err });
  }
  if (err instanceof HgError) return err;
  if (failure === 'tls') {
    attempt.outcome = 'unreachable';
    // The reason is for the operator only: a client learns nothing of the upstream's certificates.
    const reason = err instanceof Error ? `${errorCodeOf(err) ?? ''} ${err.message}`.trim() : String(err);
    return new HgError('HG_ERR_UPSTREAM_TLS', { cause: err, log: { tlsError: reason } });
  }
  // Refused, reset, or the connection lost during the body.
  attempt.outcome = 'unreachable';
  return badGateway(`${who} could not be reached.`, err);
}

/** The breaker refused the request: 503 with Retry-After, the seconds until it may try again. */
export function unavailable(waitMs: number, who: string): HgError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new HgError('HG_ERR_UPSTREAM_UNAVAILABLE', {
    detail: `${who} is failing, so requests to it are paused; try again in ${seconds} s.`,
    headers: { 'Retry-After': String(seconds) },
  });
}
