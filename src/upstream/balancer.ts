import type { Clock } from '../lib/clock.ts';
import type { UpstreamOutcome } from '../observability/metrics.ts';
import type { Target } from './target.ts';

/** How a service balances and ejects: its `balance`, `outlier` and `slowStartMs` keys. */
export interface BalancePolicy {
  readonly balance: 'least-request' | 'round-robin';
  readonly outlier: {
    readonly consecutiveFailures: number;
    readonly baseEjectionMs: number;
    readonly maxEjectionMs: number;
    /** Upstream statuses that count as a target's failure. */
    readonly statuses: readonly number[];
  };
  readonly slowStartMs: number;
}

/** Told when a target is taken out of the balance, and for how long. */
export type EjectionListener = (target: Target, forMs: number) => void;

/** The least share a target in slow start gets (Envoy's min_weight_percent default), so it is tried at all. */
const SLOW_START_FLOOR = 0.1;

/**
 * Which target of a service a request goes to, and the passive health (outlier ejection) that
 * keeps failing ones out.
 *
 * Built over one undici Pool per target rather than undici's BalancedPool: BalancedPool is a
 * weighted round robin that lowers a failing upstream's weight by its own error rule, with no
 * ejection cooldown, no least-request choice and no slow start, and it does not say which upstream
 * a request went to, which the retry (to another target), the outlier counts and the per-target
 * metrics all need.
 *
 * One pick rule serves both policies: the smooth weighted round robin (as nginx balances), over
 * each available target's weight, scaled down during its slow start and, for `least-request`,
 * divided by its requests under way plus one (Envoy's least-request over unequal weights, bias 1).
 * So idle targets share requests by weight, and a busy or slow one gets fewer.
 *
 * A service with one target skips all of it: `pick` returns that target, and no health is kept
 * (with one target there is nothing to eject it in favour of).
 */
export class Balancer {
  readonly targets: readonly Target[];
  /** One target: no balancing, no health. */
  readonly single: boolean;
  readonly #single: Target | null;
  readonly #policy: BalancePolicy;
  readonly #clock: Clock;
  readonly #onEject: EjectionListener;
  readonly #outlierStatuses: ReadonlySet<number>;

  constructor(targets: readonly Target[], policy: BalancePolicy, clock: Clock, onEject: EjectionListener) {
    if (targets.length === 0) throw new Error('a service needs at least one target');
    this.targets = targets;
    this.#single = targets.length === 1 ? (targets[0] as Target) : null;
    this.single = this.#single !== null;
    this.#policy = policy;
    this.#clock = clock;
    this.#onEject = onEject;
    this.#outlierStatuses = new Set(policy.outlier.statuses);
  }

  /** Whether the target takes requests now: not ejected, not failed by the probe. */
  available(target: Target, now: number): boolean {
    return !target.probeDown && target.ejectedUntil <= now;
  }

  /**
   * The target for the next attempt; `avoid` (the target the previous attempt failed on) only if
   * no other is available. With every target out, the least recently failed one.
   */
  pick(avoid: Target | null): Target {
    if (this.#single !== null) return this.#single;
    const now = this.#clock.now();
    return this.#weighted(now, avoid) ?? this.#weighted(now, null) ?? this.#leastRecentlyFailed();
  }

  #weighted(now: number, avoid: Target | null): Target | null {
    let total = 0;
    let best: Target | null = null;
    for (const target of this.targets) {
      if (target === avoid || !this.available(target, now)) continue;
      const weight = this.effectiveWeight(target, now);
      target.current += weight;
      total += weight;
      if (best === null || target.current > best.current) best = target;
    }
    if (best !== null) best.current -= total;
    return best;
  }

  /** A target's weight now: scaled by its slow start, and for least-request by its requests under way. */
  effectiveWeight(target: Target, now: number): number {
    let weight = target.weight * this.#slowStartShare(target, now);
    if (this.#policy.balance === 'least-request') weight /= target.outstanding + 1;
    return weight;
  }

  /** The share of its weight a target that came back has grown to (1 once `slowStartMs` passed). */
  #slowStartShare(target: Target, now: number): number {
    const { slowStartMs } = this.#policy;
    if (slowStartMs === 0 || target.backSince === null) return 1;
    const since = now - target.backSince;
    if (since >= slowStartMs) {
      target.backSince = null;
      return 1;
    }
    return Math.max(SLOW_START_FLOOR, since / slowStartMs);
  }

  #leastRecentlyFailed(): Target {
    let best = this.targets[0] as Target;
    for (const target of this.targets) if (target.lastFailedAt < best.lastFailedAt) best = target;
    return best;
  }

  /** An attempt on `target` ended: refused, reset, a time-out or a status of `outlier.statuses` is its failure, anything else its success. */
  settled(target: Target, outcome: UpstreamOutcome, status: number): void {
    if (outcome === 'unreachable' || outcome === 'timeout' || this.#outlierStatuses.has(status)) this.failed(target);
    else this.succeeded(target);
  }

  /** An attempt on `target` worked: its failures in a row start again. */
  succeeded(target: Target): void {
    if (this.#single !== null) return;
    target.failuresInRow = 0;
    target.ejections = 0;
  }

  /**
   * An attempt on `target` failed (refused, reset, time-out, an outlier status): after
   * `consecutiveFailures` in a row it is out for `baseEjectionMs` times its ejections in a row, at
   * most `maxEjectionMs`, and comes back (with slow start) when that has passed.
   */
  failed(target: Target): void {
    if (this.#single !== null) return;
    const now = this.#clock.now();
    target.lastFailedAt = now;
    // A request sent before it was ejected: its failure is already counted.
    if (target.ejectedUntil > now) return;
    target.failuresInRow += 1;
    const { consecutiveFailures, baseEjectionMs, maxEjectionMs } = this.#policy.outlier;
    if (consecutiveFailures === 0 || target.failuresInRow < consecutiveFailures) return;
    target.ejections += 1;
    target.failuresInRow = 0;
    const forMs = Math.min(baseEjectionMs * target.ejections, maxEjectionMs);
    target.ejectedUntil = now + forMs;
    target.backSince = target.ejectedUntil;
    target.current = 0;
    this.#onEject(target, forMs);
  }

  /** The probe's verdict changed (active health): out at once, or back with slow start. */
  probed(target: Target, healthy: boolean): void {
    if (target.probeDown === !healthy) return;
    target.probeDown = !healthy;
    target.current = 0;
    if (healthy) target.backSince = this.#clock.now();
  }
}
