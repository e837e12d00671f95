import { servicesOf } from '../config/service-checks.ts';
import type { Config } from '../config/types.ts';

/** The longest upstream deadline of any service, ms: no fetch (one attempt) takes longer. */
export function upstreamDeadlineMs(config: Config): number {
  let longest = 0;
  for (const service of servicesOf(config).values()) longest = Math.max(longest, service.timeoutMs);
  return longest;
}

/**
 * How long a claim lives if its holder never lets go (it died): the herd lock and an unfinished
 * idempotency record. Two upstream deadlines (a retried attempt) and a second, ms.
 */
export function leaseMs(config: Config): number {
  return 2 * upstreamDeadlineMs(config) + 1000;
}

/**
 * How long an invalidation keeps the shared tier from storing what loads that began before it
 * fetched, ms: longer than any load (a wait for another instance's fetch, then a lease), and at
 * least a minute.
 */
export function invalidationMarkMs(config: Config): number {
  return Math.max(60_000, upstreamDeadlineMs(config) + leaseMs(config) + 5000);
}
