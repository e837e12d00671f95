import type { Clock } from '../lib/clock.ts';
import type { Config } from '../config/types.ts';
import { redisTopology } from '../config/redis-topology.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { MemorySharedState } from './memory.ts';
import { RedisSharedState } from './redis-state.ts';
import type { SharedState } from './shared-state.ts';

/**
 * The shared state a config asks for: Redis when redis.url, redis.sentinels or redis.cluster is
 * set, else this process alone.
 * Never waits for Redis: a gateway
 * starts and serves with Redis down, and uses it once it answers.
 */
export function createSharedState(config: Config, clock: Clock, logger: Logger, metrics: Metrics): SharedState {
  if (redisTopology(config.redis) === 'none') return new MemorySharedState(config, clock);
  return new RedisSharedState(config, clock, logger, metrics);
}
