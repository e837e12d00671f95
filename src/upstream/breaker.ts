import type { Clock } from '../lib/clock.ts';
import type { BreakerConfig } from '../config/types.ts';
import type { BreakerStateName } from '../observability/metrics.ts';

/** What `admit` answers when the request may go to the upstream as usual. */
export const PASS = 0;
/** What `admit` answers when the request is the one probe of a half-open breaker. */
export const PROBE = -1;

/**
 * A consecutive-failure circuit breaker. Closed: requests pass and failures are counted; the
 * `failures`-th in a row opens it. Open: requests are refused for `cooldownMs`, then it is
 * half-open: exactly one request (the probe) passes, and its outcome closes the breaker or opens
 * it for another cooldown. Outcomes of requests admitted before it opened are ignored, so a slow
 * straggler cannot close or re-open it. Time comes from the injected clock.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #cooldownMs: number;
  readonly #clock: Clock;
  #failures = 0;
  #open = false;
  /** While open: when the probe may pass, in ms since the epoch. */
  #openUntilMs = 0;
  #probing = false;

  constructor(config: BreakerConfig, clock: Clock) {
    this.#threshold = config.failures;
    this.#cooldownMs = config.cooldownMs;
    this.#clock = clock;
  }

  /** As the metrics gauge and readiness see it: half-open once the cooldown is over. */
  get state(): BreakerStateName {
    if (!this.#open) return 'closed';
    return this.#waitMs() > 0 ? 'open' : 'half_open';
  }

  /**
   * May a request go to the upstream now? PASS, PROBE (it is the half-open probe: report its
   * outcome with probe = true), or else the milliseconds until a request may try again (> 0).
   */
  admit(): number {
    if (!this.#open) return PASS;
    const wait = this.#waitMs();
    if (wait > 0) return wait;
    if (this.#probing) return 1; // the probe is under way; its outcome decides soon
    this.#probing = true;
    return PROBE;
  }

  /** The upstream answered (a 404 is an answer too). */
  succeeded(probe: boolean): void {
    if (probe) {
      this.#probing = false;
      this.#open = false;
    }
    if (!this.#open) this.#failures = 0;
  }

  /** The upstream could not be reached, reset the connection, timed out or answered 5xx. */
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
  }
}
