import type { ResponseCache } from '../cache/response-cache.ts';
import type { Config, RateLimitConfig } from '../config/types.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import type { RedisApiKeyStore } from './redis-api-keys.ts';
import type { PolicyEngine, PolicySpec } from '../auth/policy-fields.ts';
import type { CacheTier } from './cache-tier.ts';
import type { InvalidationHearing } from './hearing.ts';
import type { IdempotencyStore } from './idempotency.ts';

/** What one invalidation did: here at once, elsewhere when the broadcast arrives. */
export interface Invalidation {
  /** Entries dropped from this instance's cache. */
  readonly purged: number;
  /**
   * How many instances the broadcast reached (Redis PUBLISH's subscriber count, this one included),
   * or null when it could not be sent in time (it is sent again once Redis answers); null as a
   * whole without Redis (there is nobody else to tell).
   */
  readonly instances: Promise<number | null> | null;
}

/**
 * Everything instances of one gateway share: invalidations, rate-limit decisions, the second cache
 * tier (with its herd lock) and idempotency records. Two implementations: this process alone
 * (memory.ts, today's behaviour and the default) and Redis (redis-state.ts). The gateway makes one
 * at start and keeps it across reloads; every Redis call on a request's path has a deadline and a
 * fallback, and a local cache hit never calls any of it.
 */
export interface SharedState {
  readonly kind: 'memory' | 'redis';
  /**
   * Where invalidations land: the cache in force (a reload may replace it). Until this is called
   * there is no cache yet, and invalidations from other instances have nothing to drop.
   */
  attach(cache: () => ResponseCache): void;
  /**
   * The one invalidation, everywhere: drops these keys and every member of these groups from this
   * instance's cache at once (ResponseCache.invalidate), then from every other instance's and from
   * the shared tier. Purges and writes call this. `waitMs` bounds how long `instances` waits for
   * Redis (default redis.timeoutMs); past it, the broadcast is sent again later.
   */
  invalidate(keys: readonly string[], groups: readonly string[], waitMs?: number): Invalidation;
  /** Drops every entry, everywhere (the admin purge of the whole cache). */
  clear(waitMs?: number): Invalidation;
  /**
   * The limiter for this rateLimit config (its scope decides where buckets live); null when rate
   * limiting is off. `realm` (auth/realm.ts) names whose subjects the buckets count: buckets shared
   * in Redis are kept per realm and subject.
   */
  limiter(config: RateLimitConfig, realm: string): Limiter | null;
  /**
   * Where the decisions of a plan or a route limit are made (`policies`: `p:<plan>`, `r:<route>`),
   * following rateLimit.scope as the limiter does: this instance's counts, or Redis's.
   */
  policies(spec: PolicySpec, policies: string, realm: string, config: RateLimitConfig): PolicyEngine;
  /** The second cache tier in front of the upstream for this pipeline's cache, or null (no Redis, or cache.shared false). */
  tier(cache: ResponseCache, config: Config): CacheTier | null;
  /** Whether invalidations from other instances reach this one now (always, without Redis). */
  readonly hearing: InvalidationHearing;
  /** Idempotency records of writes (per token subject and key). */
  readonly idempotency: IdempotencyStore;
  /** API keys made through the admin API, shared by every instance (auth.apiKeys.redis); null without Redis. */
  readonly apiKeys: RedisApiKeyStore | null;
  /** Closes connections; after this every call falls back as if Redis were down. */
  close(): Promise<void>;
}
