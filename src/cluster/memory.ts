import type { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import type { Config, RateLimitConfig } from '../config/types.ts';
import { RateLimiter } from '../auth/rate-limit.ts';
import { LocalPolicies } from '../auth/local-policies.ts';
import type { PolicySpec } from '../auth/policy-fields.ts';
import { ALWAYS_HEARING } from './hearing.ts';
import { MemoryIdempotencyStore } from './idempotency.ts';
import { leaseMs } from './lifetimes.ts';
import type { Invalidation, SharedState } from './shared-state.ts';

/**
 * Shared state when there is nothing to share it with (no redis.url): today's behaviour. An
 * invalidation drops from this instance's cache alone, rate limits are this instance's buckets,
 * there is no second cache tier, and idempotency records live in this process.
 */
export class MemorySharedState implements SharedState {
  readonly kind = 'memory';
  readonly idempotency: MemoryIdempotencyStore;
  /** Keys made through the admin API live in Redis only. */
  readonly apiKeys = null;
  readonly hearing = ALWAYS_HEARING;
  #cache: () => ResponseCache | null = () => null;
  readonly #clock: Clock;

  constructor(config: Config, clock: Clock) {
    this.#clock = clock;
    const { maxEntries, maxBytes, maxBytesPerSubject } = config.idempotency;
    this.idempotency = new MemoryIdempotencyStore({ maxEntries, maxBytes, maxBytesPerSubject: Math.min(maxBytesPerSubject, maxBytes) }, leaseMs(config), clock);
  }

  attach(cache: () => ResponseCache): void {
    this.#cache = cache;
  }

  invalidate(keys: readonly string[], groups: readonly string[]): Invalidation {
    return { purged: this.#cache()?.invalidate(keys, groups) ?? 0, instances: null };
  }

  clear(): Invalidation {
    return { purged: this.#cache()?.clear() ?? 0, instances: null };
  }

  limiter(config: RateLimitConfig): RateLimiter | null {
    return RateLimiter.create(config, this.#clock);
  }

  policies(spec: PolicySpec, _policies: string, _realm: string, config: RateLimitConfig): LocalPolicies {
    return new LocalPolicies(spec, config.maxKeys, this.#clock);
  }

  tier(): null {
    return null;
  }

  async close(): Promise<void> {}
}
