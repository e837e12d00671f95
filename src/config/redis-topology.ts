import { isRedisUrl } from './check.ts';
import type { RedisConfig } from './types.ts';

/**
 * How the config reaches Redis: not at all, one server (`redis.url`), a master found through
 * Sentinel (`redis.sentinels` with `redis.name`), or a Redis Cluster (`redis.cluster`). Exactly one
 * of the three keys may be set (checked in cross-key-checks.ts).
 */
export type RedisTopology = 'none' | 'server' | 'sentinel' | 'cluster';

export function redisTopology(redis: RedisConfig): RedisTopology {
  if (redis.url !== null) return 'server';
  if (redis.sentinels !== null) return 'sentinel';
  if (redis.cluster !== null) return 'cluster';
  return 'none';
}

/** The problems of the keys that choose how Redis is reached, as [key, message] pairs. */
export function redisTopologyProblems(redis: RedisConfig): [string, string][] {
  const problems: [string, string][] = [];
  const set = (['url', 'sentinels', 'cluster'] as const).filter((key) => redis[key] !== null);
  if (set.length > 1)
    problems.push([`redis.${set[1]}`, `set only one of ${set.map((key) => `redis.${key}`).join(' and ')} (they are different ways to reach Redis)`]);
  if (redis.sentinels !== null && redis.sentinels.length === 0) problems.push(['redis.sentinels', 'expected at least one entry']);
  if (redis.sentinels !== null && redis.name === null) problems.push(['redis.name', "required with redis.sentinels (the master's name the Sentinels know)"]);
  if (redis.sentinels === null && redis.name !== null) problems.push(['redis.name', 'only used with redis.sentinels']);
  for (const key of ['sentinelPassword', 'password'] as const) {
    if (redis.sentinels === null && redis[key] !== null) problems.push([`redis.${key}`, 'only used with redis.sentinels']);
  }
  if (redis.cluster !== null) {
    if (redis.cluster.length === 0) problems.push(['redis.cluster', 'expected at least one seed node']);
    for (const node of redis.cluster) {
      if (!isRedisUrl(node)) problems.push(['redis.cluster', 'expected redis:// or rediss:// URLs of seed nodes (host and port)']);
    }
  }
  return problems;
}
