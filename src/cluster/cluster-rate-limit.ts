import { GrowingLru } from '../lib/growing-lru.ts';
import type { Clock } from '../lib/clock.ts';
import type { HgError } from '../lib/errors.ts';
import { RateLimiter, rateLimitPolicy, rateLimited, type BucketConfig, type Limiter } from '../http/rate-limit.ts';
import type { RedisLink } from './redis-link.ts';
import type { RedisMetrics } from './redis-metrics.ts';
import { RATE } from './scripts.ts';

/**
 * One rate limit for every instance sharing Redis (rateLimit.scope "cluster"): each decision is
 * one atomic script on Redis's clock (scripts.ts, RATE: GCRA, the same bucket as the local
 * limiter's: `burst` at once, then `requestsPerSecond`), keyed by subject or address as the local
 * limiter is; a subject's bucket is named by its realm too (auth/realm.ts), as gateways with other
 * key sources may share the prefix. A refusal is remembered here until it expires, so a client hammering at 429 costs no
 * Redis call. When Redis does not answer within redis.timeoutMs, this instance's own buckets decide
 * (fail open, but capped at the per-instance limit) and hypergate_rate_limit_fallback_total counts it.
 */
export class ClusterRateLimiter implements Limiter {
  readonly #link: RedisLink;
  readonly #metrics: RedisMetrics;
  readonly #clock: Clock;
  readonly #local: RateLimiter;
  /** Emission interval, µs: one request per this, on average. */
  readonly #intervalUs: number;
  readonly #burst: number;
  readonly #policy: string;
  /** `rl:s:<realm>:`, the start of every subject's bucket key. */
  readonly #subjects: string;
  /** Refused buckets: until when (this clock, ms) they stay refused. */
  readonly #refused: GrowingLru<string, number>;

  static create(config: BucketConfig, realm: string, link: RedisLink, metrics: RedisMetrics, clock: Clock): ClusterRateLimiter | null {
    const local = RateLimiter.create(config, clock);
    return local === null ? null : new ClusterRateLimiter(config, `rl:s:${realm}:`, local, { link, metrics }, clock);
  }

  private constructor(config: BucketConfig, subjects: string, local: RateLimiter, redis: { link: RedisLink; metrics: RedisMetrics }, clock: Clock) {
    const { link, metrics } = redis;
    this.#subjects = subjects;
    const perSecond = config.requestsPerSecond as number;
    this.#link = link;
    this.#metrics = metrics;
    this.#clock = clock;
    this.#local = local;
    this.#intervalUs = 1_000_000 / perSecond;
    this.#burst = config.burst;
    this.#policy = rateLimitPolicy(config.burst, perSecond);
    this.#refused = new GrowingLru<string, number>(config.maxKeys);
  }

  take(subject: string | undefined, address: string | undefined): HgError | null | Promise<HgError | null> {
    const key = subject === undefined ? `rl:a:${address ?? ''}` : this.#subjects + subject;
    const until = this.#refused.get(key);
    if (until !== undefined) {
      const left = until - this.#clock.now();
      if (left > 0) return rateLimited(Math.ceil(left / 1000), this.#policy);
      this.#refused.delete(key);
    }
    return this.#link.script('rate', RATE, [], [this.#link.prefix + key, this.#intervalUs, this.#burst]).then(
      (answer) => this.#decided(key, answer),
      () => {
        this.#metrics.fallback();
        return this.#local.take(subject, address);
      },
    );
  }

  /**
   * Refunds this instance's bucket only: a GCRA decision in Redis is not taken back, so a key-server
   * outage can cost an address one request of its cluster-wide budget (README "Rate limiting").
   */
  giveBack(address: string | undefined): void {
    this.#local.giveBack(address);
  }

  #decided(key: string, answer: unknown): HgError | null {
    const [allowed, waitMs] = Array.isArray(answer) ? (answer as [unknown, unknown]) : [1, 0];
    if (allowed === 1 || typeof waitMs !== 'number') return null;
    this.#refused.set(key, this.#clock.now() + waitMs);
    return rateLimited(Math.max(1, Math.ceil(waitMs / 1000)), this.#policy);
  }
}
