/** When a breaker opens and how long it stays open (upstream.breaker and redis.breaker have this shape). */
export interface BreakerSettings {
  /** Consecutive failures that open it; 0 never opens it. */
  readonly failures: number;
  /** How long it stays open before one probe may pass, in ms. */
  readonly cooldownMs: number;
}

/** The states as the metrics gauge and readiness name them. */
export type BreakerState = 'closed' | 'half_open' | 'open';

/** What `admit` answers when the request may go as usual. */
export const PASS = 0;
/** What `admit` answers when the request is the one probe of a half-open breaker. */
export const PROBE = -1;

/**
 * A consecutive-failure circuit breaker. Closed: requests pass and failures are counted; the
 * `failures`-th in a row opens it. Open: requests are refused for `cooldownMs`, then it is
 * half-open: exactly one request (the probe) passes, and its outcome closes the breaker or opens
 * it for another cooldown. Outcomes of requests admitted before it opened are ignored, so a slow
 * straggler cannot close or re-open it. Time comes from the injected clock (milliseconds since the
 * epoch), so the cooldown is testable without waiting.
 *
 * `onStateChange`, when given, hears when it opens, when its probe is let through (half-open) and
 * when the probe closes it; never per request while nothing changes.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #cooldownMs: number;
  readonly #clock: { now(): number };
  readonly #onStateChange: ((state: BreakerState) => void) | undefined;
  #failures = 0;
  #open = false;
  /** While open: when the probe may pass, in ms since the epoch. */
  #openUntilMs = 0;
  #probing = false;

  constructor(settings: BreakerSettings, clock: { now(): number }, onStateChange?: (state: BreakerState) => void) {
    this.#threshold = settings.failures;
    this.#cooldownMs = settings.cooldownMs;
    this.#clock = clock;
    this.#onStateChange = onStateChange;
  }

  /** As the metrics gauge and readiness see it: half-open once the cooldown is over. */
  get state(): BreakerState {
    if (!this.#open) return 'closed';
    return this.#waitMs() > 0 ? 'open' : 'half_open';
  }

  /**
   * May a request go now? PASS, PROBE (it is the half-open probe: report its outcome with
   * probe = true), or else the milliseconds until a request may try again (> 0).
   */
  admit(): number {
    if (!this.#open) return PASS;
    const wait = this.#waitMs();
    if (wait > 0) return wait;
    if (this.#probing) return 1; // the probe is under way; its outcome decides soon
    this.#probing = true;
    this.#onStateChange?.('half_open');
    return PROBE;
  }

  /** The other side answered (for an upstream, a 404 is an answer too). */
  succeeded(probe: boolean): void {
    if (probe) {
      this.#probing = false;
      this.#open = false;
      this.#onStateChange?.('closed');
    }
    if (!this.#open) this.#failures = 0;
  }

  /**
   * The request ended with no word on the other side either way (its own client gave up, or its
   * body was refused before an answer): the probe, if it was one, leaves the next request free to probe.
   */
  released(probe: boolean): void {
    if (probe) this.#probing = false;
  }

  /** The other side could not be reached, reset the connection, timed out or failed (an upstream's 5xx). */
  failed(probe: boolean): void {
    if (probe) {
      this.#probing = false;
      this.#trip();
      return;
    }
    if (this.#open || this.#threshold === 0) return;
    if (++this.#failures >= this.#threshold) this.#trip();
  }

  /** Ms left of the cooldown (<= 0 when over). */
  #waitMs(): number {
    const now = this.#clock.now();
    // The clock is the wall clock: stepped back (NTP, a resumed VM), it would keep the breaker
    // open, and /readyz failing, for the size of the step. The cooldown never runs past its length.
    if (this.#openUntilMs - now > this.#cooldownMs) this.#openUntilMs = now + this.#cooldownMs;
    return this.#openUntilMs - now;
  }

  #trip(): void {
    this.#open = true;
    this.#failures = 0;
    this.#openUntilMs = this.#clock.now() + this.#cooldownMs;
    this.#onStateChange?.('open');
  }
}
