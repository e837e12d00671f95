import type { ResponseCache } from '../cache/response-cache.ts';
import { customerPath } from '../resources/customer-representation.ts';

/** Drops cached entries of one customer (all its representations), or every entry; returns how many. */
export function purgeCache(cache: ResponseCache, customerId: number | null): number {
  if (customerId === null) return cache.clear();
  const path = customerPath(customerId);
  // Every representation of the customer: the path itself and anything keyed below or beside it.
  return cache.deleteWhere((key) => key === path || (key.startsWith(path) && '/?#;'.includes(key.charAt(path.length))));
}
