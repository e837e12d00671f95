import type { ResponseCache } from '../cache/response-cache.ts';
import { HgError } from '../errors.ts';
import { API_ROOT, OPENAPI_PATH } from '../resources/api-root.ts';
import type { ResourceTable } from '../resources/compile.ts';

/**
 * Admin purge of one public path, or of everything (null). An item's path drops it in every
 * format, every cached page of its collection and everything below it (the same invalidation a
 * delete makes); a collection's path drops all its pages. The path may be given without the API
 * root's prefix ("/customers/88" for "/api/customers/88"). A path no route answers is a 404.
 * Returns how many entries were dropped.
 */
export function purgeCache(cache: ResponseCache, table: ResourceTable, path: string | null): number {
  if (path === null) return cache.clear();
  for (const candidate of path.startsWith(`${API_ROOT}/`) || path === API_ROOT ? [path] : [path, API_ROOT + path]) {
    const item = table.matchItem(candidate);
    if (item !== null) {
      const { keys, groups } = item.resource.invalidation(candidate, item.values, true);
      return cache.invalidate(keys, groups);
    }
    const collection = table.matchCollection(candidate);
    if (collection !== null && collection.resource.collection !== null) return cache.invalidate([candidate], [collection.resource.collection.pagesGroup(collection.values)]);
    if (candidate === API_ROOT || candidate === OPENAPI_PATH) return cache.invalidate([candidate], []);
  }
  throw new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: 'No resource of this gateway has this path.' });
}
