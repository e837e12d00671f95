import type { PurgeResult } from '../admin/backend.ts';
import { HgError } from '../lib/errors.ts';
import { API_ROOT, OPENAPI_PATH } from '../resources/api-root.ts';
import type { ResourceTable } from '../resources/compile.ts';
import type { Invalidation, SharedState } from '../cluster/shared-state.ts';

/** The names an admin purge of `path` drops, or null for a path no route answers. */
function invalidationOf(table: ResourceTable, path: string): { keys: string[]; groups: string[] } | null {
  for (const candidate of path.startsWith(`${API_ROOT}/`) || path === API_ROOT ? [path] : [path, API_ROOT + path]) {
    const item = table.matchItem(candidate);
    if (item !== null) return item.resource.invalidation(candidate, item.values, true);
    const collection = table.matchCollection(candidate);
    if (collection !== null && collection.resource.collection !== null)
      return { keys: [candidate], groups: [collection.resource.collection.pagesGroup(collection.values)] };
    if (candidate === API_ROOT || candidate === OPENAPI_PATH) return { keys: [candidate], groups: [] };
  }
  return null;
}

/**
 * Admin purge of one public path, or of everything (null), on every instance (shared.invalidate:
 * here at once, elsewhere through Redis). An item's path drops it in every format, every cached
 * page of its collection and everything below it (the same invalidation a delete makes); a
 * collection's path drops all its pages. The path may be given without the API root's prefix
 * ("/customers/88" for "/api/customers/88"). A path no route answers is a 404. `waitMs` bounds the
 * wait for Redis to confirm the broadcast.
 */
export async function purgeCache(shared: SharedState, table: ResourceTable, path: string | null, waitMs: number): Promise<PurgeResult> {
  let done: Invalidation;
  if (path === null) done = shared.clear(waitMs);
  else {
    const names = invalidationOf(table, path);
    if (names === null) throw new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: 'No resource of this gateway has this path.' });
    done = shared.invalidate(names.keys, names.groups, waitMs);
  }
  if (done.instances === null) return { purged: done.purged };
  return { purged: done.purged, instances: await done.instances };
}
