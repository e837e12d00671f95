import type { TokenVerifier } from '../auth/verifier.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import type { Config } from '../config/types.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { CacheTier } from '../cluster/cache-tier.ts';
import type { SharedState } from '../cluster/shared-state.ts';

/** What route handlers are built from; made once by createGateway. */
export interface GatewayContext {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly verifier: TokenVerifier;
  readonly cache: ResponseCache;
  /** Counters, and the hooks (breaker state) other parts report through. */
  readonly metrics: Metrics;
  /** What instances share (invalidation everywhere, idempotency records); this process alone without redis.url. */
  readonly shared: SharedState;
  /** The second cache tier a local miss asks before the upstream; null without one. */
  readonly tier: CacheTier | null;
  /** Tracing is on (tracing.enabled): the token and the cache lookup are then spans of their own; off, the one check they cost. */
  readonly traced: boolean;
}
