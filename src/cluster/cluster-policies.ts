import { LocalPolicies } from '../auth/local-policies.ts';
import type { Period } from '../auth/calendar.ts';
import type { Decision, PolicyEngine, PolicySpec, Tally } from '../auth/policy-fields.ts';
import type { Clock } from '../lib/clock.ts';
import { GrowingLru } from '../lib/growing-lru.ts';
import type { ClusterLimitRedis } from './cluster-rate-limit.ts';
import { PLAN } from './scripts.ts';

/** A quota count outlives its period by this much, so an instance whose clock runs behind still finds it. */
const QUOTA_MARGIN_MS = 3_600_000;

/** A refusal remembered: until when, and what it said. */
interface Refused {
  readonly untilMs: number;
  readonly byRate: boolean;
  readonly used: readonly number[];
  readonly spent: number;
}

/**
 * A plan or a route limit held across every instance sharing Redis, as the cluster rate limit is
 * (cluster-rate-limit.ts): each decision is one atomic script (scripts.ts, PLAN) over the key's
 * bucket and its quota counts, in one hash slot; the bucket runs on Redis's clock, the quotas'
 * periods on this instance's (calendar days and months in UTC). A refusal is remembered here
 * until it expires (a spent monthly quota: until the month ends), so a client hammering at 429
 * costs no Redis call. When Redis does not answer within redis.timeoutMs, this instance's own
 * counts decide and hypergate_rate_limit_fallback_total counts it; they hold this instance's share
 * (the bucket and each quota divided by the instances sharing the prefix), and every request
 * Redis passed is counted there too.
 */
export class ClusterPolicies implements PolicyEngine {
  readonly spec: PolicySpec;
  readonly #redis: ClusterLimitRedis;
  readonly #clock: Clock;
  readonly #local: LocalPolicies;
  /** `pl:{<realm>:`, and `}:<policies>` after the key. */
  readonly #head: string;
  readonly #tail: string;
  readonly #intervalUs: number;
  readonly #refused: GrowingLru<string, Refused>;
  #sharedBy = 1;

  /** `policies`: whose bucket this is (`p:<plan>`, `r:<route>`); `realm` (auth/realm.ts): whose subjects. */
  constructor(spec: PolicySpec, policies: string, realm: string, maxKeys: number, redis: ClusterLimitRedis, clock: Clock) {
    this.spec = spec;
    this.#redis = redis;
    this.#clock = clock;
    this.#local = new LocalPolicies(spec, maxKeys, clock);
    this.#head = `${redis.link.prefix}pl:{${realm}:`;
    this.#tail = `}:${policies}`;
    this.#intervalUs = 1_000_000 / spec.requestsPerSecond;
    this.#refused = new GrowingLru<string, Refused>(maxKeys);
  }

  decide(key: string): Decision | Promise<Decision> {
    const now = this.#clock.now();
    const fields = this.#local.fields;
    const periods = fields.periodsAt(now);
    const remembered = this.#remembered(key, now);
    if (remembered !== null) return fields.decision(remembered, periods, now);
    const bucket = this.#head + key + this.#tail;
    const keys = [bucket];
    const args: number[] = [this.#intervalUs, this.spec.burst];
    this.spec.quotas.forEach((quota, i) => {
      const period = periods[i] as Period;
      keys.push(`${bucket}:${quota.per === 'day' ? 'd' : 'm'}${period.id}`);
      args.push(quota.requests, period.endMs - now + QUOTA_MARGIN_MS);
    });
    return this.#redis.link.script('rate', PLAN, keys, args).then(
      (answer) => {
        const tally = tallyOf(answer, periods.length);
        if (tally === null) return this.#shared().decide(key);
        // Passed by Redis: counted in this instance's share as well (its result does not matter here).
        if (tally.allowed) this.#shared().count(key, periods, now);
        else this.#remember(key, tally, periods, now);
        return fields.decision(tally, periods, now);
      },
      () => {
        this.#redis.metrics.fallback();
        return this.#shared().decide(key);
      },
    );
  }

  #remembered(key: string, now: number): Tally | null {
    const refused = this.#refused.get(key);
    if (refused === undefined) return null;
    const left = refused.untilMs - now;
    if (left <= 0) {
      this.#refused.delete(key);
      return null;
    }
    return { allowed: false, tokens: 0, rateWaitMs: refused.byRate ? left : 0, used: refused.used, spent: refused.spent };
  }

  #remember(key: string, tally: Tally, periods: readonly Period[], now: number): void {
    let untilMs = now + tally.rateWaitMs;
    periods.forEach((period, i) => {
      if ((tally.spent & (1 << i)) !== 0) untilMs = Math.max(untilMs, period.endMs);
    });
    if (untilMs > now)
      this.#refused.set(key, { untilMs, byRate: tally.rateWaitMs > 0 && untilMs === now + tally.rateWaitMs, used: tally.used, spent: tally.spent });
  }

  /** This instance's counts, holding its share among the instances counted now. */
  #shared(): LocalPolicies {
    const instances = this.#redis.size.count;
    if (instances !== this.#sharedBy) {
      this.#local.share(instances);
      this.#sharedBy = instances;
    }
    return this.#local;
  }
}

/** PLAN's answer read; null when it is not one (then this instance decides). */
function tallyOf(answer: unknown, quotas: number): Tally | null {
  if (!Array.isArray(answer) || answer.length !== 4 + quotas || !answer.every((n) => typeof n === 'number')) return null;
  const [allowed, tokens, rateWaitMs, spent, ...used] = answer;
  return { allowed: allowed === 1, tokens: tokens as number, rateWaitMs: rateWaitMs as number, used, spent: spent as number };
}
