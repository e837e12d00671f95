import { randomBytes } from 'node:crypto';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import type { Config, RateLimitConfig } from '../config/types.ts';
import { RateLimiter, type Limiter } from '../auth/rate-limit.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { CacheTier } from './cache-tier.ts';
import { ClusterRateLimiter, type ClusterLimitRedis } from './cluster-rate-limit.ts';
import { ClusterPolicies } from './cluster-policies.ts';
import { LocalPolicies } from '../auth/local-policies.ts';
import type { PolicyEngine, PolicySpec } from '../auth/policy-fields.ts';
import { ClusterSize } from './cluster-size.ts';
import type { InvalidationHearing } from './hearing.ts';
import { InvalidationBus, invalidationChannel } from './invalidation-bus.ts';
import { invalidationMarkMs, leaseMs, upstreamDeadlineMs } from './lifetimes.ts';
import { RedisIdempotencyStore } from './redis-idempotency.ts';
import { RedisApiKeyStore } from './redis-api-keys.ts';
import { RedisLink } from './redis-link.ts';
import { RedisMetrics } from './redis-metrics.ts';
import type { Invalidation, SharedState } from './shared-state.ts';

/**
 * Shared state in Redis (redis.url): invalidations broadcast to every instance, cluster-wide rate
 * limits, the second cache tier with its herd lock, idempotency records. Made once per gateway
 * from the config it started with (redis.* needs a restart); the rate limiter and the tier are made
 * per pipeline, as their settings may change on reload.
 */
export class RedisSharedState implements SharedState {
  readonly kind = 'redis';
  readonly idempotency: RedisIdempotencyStore;
  readonly apiKeys: RedisApiKeyStore;
  readonly #link: RedisLink;
  readonly #metrics: RedisMetrics;
  readonly #bus: InvalidationBus;
  /** Made with the first cluster rate limiter: only its fallback needs the count. */
  #size: ClusterSize | null = null;
  #cache: () => ResponseCache | null = () => null;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** This instance's name in locks and messages: random, so two processes never share one. */
  readonly #origin = randomBytes(9).toString('base64url');

  constructor(config: Config, clock: Clock, logger: Logger, metrics: Metrics) {
    this.#clock = clock;
    this.#logger = logger;
    this.#metrics = new RedisMetrics(metrics.registry);
    this.#link = new RedisLink(config.redis, clock, logger, this.#metrics);
    this.#bus = new InvalidationBus(this.#link, () => this.#cache(), this.#metrics, logger, this.#origin, {
      markMs: invalidationMarkMs(config),
      graceMs: config.redis.invalidationGraceMs,
      clock,
    });
    this.idempotency = new RedisIdempotencyStore(this.#link, leaseMs(config), this.#metrics, logger);
    this.apiKeys = new RedisApiKeyStore(this.#link, clock, config.redis.connectTimeoutMs);
  }

  get hearing(): InvalidationHearing {
    return this.#bus.hearing;
  }

  attach(cache: () => ResponseCache): void {
    this.#cache = cache;
  }

  /** `waitMs`: how long the broadcast may take to be confirmed (default redis.timeoutMs); past it, it is sent again later. */
  invalidate(keys: readonly string[], groups: readonly string[], waitMs = this.#link.timeoutMs): Invalidation {
    const purged = this.#cache()?.invalidate(keys, groups) ?? 0;
    return { purged, instances: this.#bus.send(keys, groups, waitMs) };
  }

  clear(waitMs = this.#link.timeoutMs): Invalidation {
    const purged = this.#cache()?.clear() ?? 0;
    return { purged, instances: this.#bus.send(null, [], waitMs) };
  }

  limiter(config: RateLimitConfig, realm: string): Limiter | null {
    if (config.scope === 'instance') return RateLimiter.create(config, this.#clock);
    if (config.requestsPerSecond === null || config.requestsPerSecond === 0) return null;
    return ClusterRateLimiter.create(config, realm, this.#limitRedis(), this.#clock);
  }

  policies(spec: PolicySpec, policies: string, realm: string, config: RateLimitConfig): PolicyEngine {
    if (config.scope === 'instance') return new LocalPolicies(spec, config.maxKeys, this.#clock);
    return new ClusterPolicies(spec, policies, realm, config.maxKeys, this.#limitRedis(), this.#clock);
  }

  /** What a cluster limit uses of Redis; the instance count is kept only once one is made: only its fallback needs it. */
  #limitRedis(): ClusterLimitRedis {
    this.#size ??= new ClusterSize(this.#link, invalidationChannel(this.#link.prefix));
    this.#metrics.watchInstances(this.#size);
    return { link: this.#link, metrics: this.#metrics, size: this.#size };
  }

  tier(cache: ResponseCache, config: Config): CacheTier | null {
    if (config.cache.shared === false) return null;
    const waitMs = upstreamDeadlineMs(config);
    const times = { waitMs, lockMs: leaseMs(config), absenceMs: config.cache.notFoundSeconds * 1000 };
    return new CacheTier({
      link: this.#link,
      cache,
      clock: this.#clock,
      metrics: this.#metrics,
      logger: this.#logger,
      owner: this.#origin,
      times,
      held: () => this.#bus.pending,
    });
  }

  async close(): Promise<void> {
    this.#bus.close();
    this.#size?.close();
    await this.#link.close();
  }
}
