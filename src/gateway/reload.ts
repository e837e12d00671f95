import type { Config } from '../config/types.ts';
import { same } from './pipeline.ts';

/**
 * The keys a running gateway cannot apply in place: what changed among them takes effect only
 * after a restart (listening addresses and workers; maxHeaderBytes is handed to each connection's
 * parser when it is created; the embedded sample service is started once).
 */
export function restartRequired(previous: Config, next: Config, initial: Config, embedded: boolean): string[] {
  const keys: string[] = [];
  for (const key of ['host', 'port', 'workers', 'maxHeaderBytes'] as const) {
    if (!same(previous.server[key], next.server[key])) keys.push(`server.${key}`);
  }
  if (!same(previous.admin.host, next.admin.host) || !same(previous.admin.port, next.admin.port)) keys.push('admin.host/admin.port');
  // The Redis connection and what hangs on it are made once, at start.
  if (!same(initial.redis, next.redis) || !same(initial.idempotency, next.idempotency)) keys.push('redis/idempotency');
  if (embedded && next.upstream.url === null && next.sampleUpstream.customers !== initial.sampleUpstream.customers) keys.push('sampleUpstream.customers');
  return keys;
}
