import { GrowingLru } from '../lib/growing-lru.ts';
import type { Clock } from '../lib/clock.ts';
import type { HgError } from '../lib/errors.ts';
import { RateLimiter, rateLimitPolicy, rateLimited, type BucketConfig, type Limiter } from '../auth/rate-limit.ts';
import type { ClusterSize } from './cluster-size.ts';
import type { RedisLink } from './redis-link.ts';
import type { RedisMetrics } from './redis-metrics.ts';
import { RATE } from './scripts.ts';

/**
 * One rate limit for every instance sharing Redis (rateLimit.scope "cluster"): each decision is
 * one atomic script on Redis's clock (scripts.ts, RATE: GCRA, the same bucket as the local
 * limiter's: `burst` at once, then `requestsPerSecond`), keyed by subject or address as the local
 * limiter is; a subject's bucket is named by its realm too (auth/realm.ts), as gateways with other
 * key sources may share the prefix. A refusal is remembered here until it expires, so a client hammering at 429 costs no
 * Redis call, and an address over its budget for failed authentication is refused here, before
 * any crypto and without asking Redis.
 *
 * When Redis does not answer within redis.timeoutMs, this instance's own buckets decide and
 * hypergate_rate_limit_fallback_total counts it. They hold this instance's share of the limit
 * (burst and rate divided by the instances sharing the prefix, ClusterSize), so instances deciding
 * alone together pass about one limit, not one each; and every request Redis let through here is
 * taken from them too, so a fallback in the middle of a burst knows what this instance has passed.
 */
/** What a cluster limit uses of Redis: the link, its metrics, and the count of instances sharing the prefix. */
export interface ClusterLimitRedis {
  readonly link: RedisLink;
  readonly metrics: RedisMetrics;
  readonly size: ClusterSize;
}

export class ClusterRateLimiter implements Limiter {
  readonly #link: RedisLink;
  readonly #metrics: RedisMetrics;
  readonly #clock: Clock;
  readonly #local: RateLimiter;
  readonly #size: ClusterSize;
  /** The instance count the local buckets are shared by. */
  #sharedBy = 1;
  /** `rl:s:<realm>:`, the start of every subject's bucket key. */
  readonly #subjects: string;
  /** Emission interval, µs: one request per this, on average. */
  readonly #intervalUs: number;
  readonly #burst: number;
  readonly #policy: string;
  /** Refused buckets: until when (this clock, ms) they stay refused. */
  readonly #refused: GrowingLru<string, number>;

  static create(config: BucketConfig, realm: string, redis: ClusterLimitRedis, clock: Clock): ClusterRateLimiter | null {
    const local = RateLimiter.create(config, clock);
    return local === null ? null : new ClusterRateLimiter(config, `rl:s:${realm}:`, local, redis, clock);
  }

  private constructor(config: BucketConfig, subjects: string, local: RateLimiter, redis: ClusterLimitRedis, clock: Clock) {
    const { link, metrics, size } = redis;
    this.#subjects = subjects;
    const perSecond = config.requestsPerSecond as number;
    this.#link = link;
    this.#metrics = metrics;
    this.#clock = clock;
    this.#local = local;
    this.#size = size;
    this.#intervalUs = 1_000_000 / perSecond;
    this.#burst = config.burst;
    this.#policy = rateLimitPolicy(config.burst, perSecond);
    this.#refused = new GrowingLru<string, number>(config.maxKeys);
  }

  take(subject: string | undefined, address: string | undefined): HgError | null | Promise<HgError | null> {
    const key = subject === undefined ? `rl:a:${address ?? ''}` : this.#subjects + subject;
    const remembered = this.#remembered(key);
    if (remembered !== null) return remembered;
    const bucket = this.#link.recordPrefix + key;
    return this.#link.script('rate', RATE, [bucket], [bucket, this.#intervalUs, this.#burst, 'take']).then(
      (answer) => {
        const over = this.#decided(key, answer);
        // Passed by Redis: taken from this instance's share as well (its result does not matter here).
        if (over === null) this.#shared().take(subject, address);
        return over;
      },
      () => {
        this.#metrics.fallback();
        return this.#shared().take(subject, address);
      },
    );
  }

  refusing(address: string | undefined): HgError | null {
    return this.#remembered(`rl:a:${address ?? ''}`);
  }

  charge(address: string | undefined): Promise<void> {
    const key = `rl:a:${address ?? ''}`;
    const bucket = this.#link.recordPrefix + key;
    return this.#link.script('rate', RATE, [bucket], [bucket, this.#intervalUs, this.#burst, 'charge']).then(
      (waitMs) => {
        this.#shared().charge(address);
        this.#refuseFor(key, typeof waitMs === 'number' ? waitMs : 0);
      },
      () => {
        this.#metrics.fallback();
        this.#refuseFor(key, this.#shared().chargeWaitMs(address));
      },
    );
  }

  /** The refusal remembered for `key`, while it lasts. */
  #remembered(key: string): HgError | null {
    const until = this.#refused.get(key);
    if (until === undefined) return null;
    const left = until - this.#clock.now();
    if (left > 0) return rateLimited(Math.ceil(left / 1000), this.#policy);
    this.#refused.delete(key);
    return null;
  }

  #refuseFor(key: string, waitMs: number): void {
    if (waitMs > 0) this.#refused.set(key, this.#clock.now() + waitMs);
  }

  /** This instance's buckets, holding its share of the limit among the instances counted now. */
  #shared(): RateLimiter {
    const instances = this.#size.count;
    if (instances !== this.#sharedBy) {
      this.#local.share(instances);
      this.#sharedBy = instances;
    }
    return this.#local;
  }

  #decided(key: string, answer: unknown): HgError | null {
    const [allowed, waitMs] = Array.isArray(answer) ? (answer as [unknown, unknown]) : [1, 0];
    if (allowed === 1 || typeof waitMs !== 'number') return null;
    this.#refuseFor(key, waitMs);
    return rateLimited(Math.max(1, Math.ceil(waitMs / 1000)), this.#policy);
  }
}
