import type { Clock } from '../lib/clock.ts';
import { GrowingLru } from '../lib/growing-lru.ts';
import type { Period } from './calendar.ts';
import { PolicyFields, type Decision, type PolicyEngine, type PolicySpec, type Tally } from './policy-fields.ts';

/** One key's standing: its bucket (`tokens` at `atMs`) and, per quota, the period counted and its count. */
interface Standing {
  tokens: number;
  atMs: number;
  readonly periods: number[];
  readonly counts: number[];
}

/**
 * A set of policies counted in this process's memory: each instance on its own, or a cluster
 * engine's fallback holding its share (share()). The bucket is the limiter's without plans (burst
 * at once, then the rate); each quota counts a key's requests in the current calendar period and
 * starts again at zero when the period changes. At most `maxKeys` keys are held; the least
 * recently seen is dropped first, which gives that key a full bucket and fresh quotas.
 */
export class LocalPolicies implements PolicyEngine {
  readonly spec: PolicySpec;
  readonly fields: PolicyFields;
  readonly #clock: Clock;
  readonly #keys: GrowingLru<string, Standing>;
  #perSecond: number;
  #burst: number;
  #limits: number[];

  constructor(spec: PolicySpec, maxKeys: number, clock: Clock) {
    this.spec = spec;
    this.#clock = clock;
    this.fields = new PolicyFields(spec, clock.now());
    this.#keys = new GrowingLru<string, Standing>(maxKeys);
    this.#perSecond = spec.requestsPerSecond;
    this.#burst = spec.burst;
    this.#limits = spec.quotas.map((q) => q.requests);
  }

  /** Holds `1 / instances` of the burst, the rate and each quota: a cluster engine's fallback, so instances deciding alone together pass about one limit. */
  share(instances: number): void {
    const n = Math.max(1, instances);
    this.#burst = this.spec.burst / n;
    this.#perSecond = this.spec.requestsPerSecond / n;
    this.#limits = this.spec.quotas.map((q) => q.requests / n);
  }

  decide(key: string): Decision {
    const now = this.#clock.now();
    const periods = this.fields.periodsAt(now);
    return this.fields.decision(this.count(key, periods, now), periods, now);
  }

  /** Counts one request of `key` when every policy has room (the cluster engine also calls it for requests Redis passed). */
  count(key: string, periods: readonly Period[], now: number): Tally {
    let standing = this.#keys.get(key);
    if (standing === undefined) {
      standing = { tokens: this.#burst, atMs: now, periods: periods.map((p) => p.id), counts: periods.map(() => 0) };
      this.#keys.set(key, standing);
    }
    // A clock stepped back refills nothing rather than taking tokens away.
    const elapsed = now > standing.atMs ? now - standing.atMs : 0;
    const tokens = Math.min(this.#burst, standing.tokens + (elapsed * this.#perSecond) / 1000);
    standing.atMs = now;
    standing.tokens = tokens;
    let spent = 0;
    for (let i = 0; i < periods.length; i++) {
      const id = (periods[i] as Period).id;
      if (standing.periods[i] !== id) {
        standing.periods[i] = id;
        standing.counts[i] = 0;
      }
      if ((standing.counts[i] as number) + 1 > (this.#limits[i] as number)) spent |= 1 << i;
    }
    if (tokens < 1 || spent !== 0) {
      const rateWaitMs = tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / this.#perSecond);
      return { allowed: false, tokens, rateWaitMs, used: standing.counts.slice(), spent };
    }
    standing.tokens = tokens - 1;
    for (let i = 0; i < periods.length; i++) standing.counts[i] = (standing.counts[i] as number) + 1;
    return { allowed: true, tokens: tokens - 1, rateWaitMs: 0, used: standing.counts.slice(), spent };
  }
}
