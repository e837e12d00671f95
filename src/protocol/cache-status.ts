/**
 * RFC 9211 Cache-Status values, by the cache named "hypergate". A hit says how long it stays
 * fresh (ttl, seconds); a miss says it was forwarded and whether the answer was stored.
 */
export const CACHE_NAME = 'hypergate';

export function hitStatus(ttlSeconds: number): string {
  return `${CACHE_NAME}; hit; ttl=${ttlSeconds}`;
}

/** Forwarded because nothing fresh was cached; `collapsed` when it rode on another request's fetch. */
export function missStatus(stored: boolean, collapsed: boolean): string {
  return `${CACHE_NAME}; fwd=miss${stored ? '; stored' : ''}${collapsed ? '; collapsed' : ''}`;
}

/** Why a stale entry answered: the upstream failed, or a background refresh is under way. */
export type StaleReason = 'stale-if-error' | 'stale-while-revalidate';

/**
 * Served from a stale entry; ttl is negative, the seconds it has been stale (section 2.4), and
 * detail names the rule that allowed it (section 2.8). `forwarded`: this request went to the
 * upstream, which failed (fwd=stale, section 2.2). Otherwise the cache answered it alone (a
 * stale-while-revalidate answer, whose refresh is another request, or one the open breaker kept
 * from the upstream): that is a stale hit (section 2.1, and the `hit; ttl=-412` example of section 3).
 */
export function staleStatus(ttlSeconds: number, reason: StaleReason, forwarded: boolean): string {
  return `${CACHE_NAME}; ${forwarded ? 'fwd=stale' : 'hit'}; ttl=${ttlSeconds}; detail=${reason}`;
}
