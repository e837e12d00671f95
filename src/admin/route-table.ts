import type { RouteDef } from '../protocol/route.ts';
import type { CompiledRoute } from '../passthrough/compile.ts';
import type { CompiledResource, ResourceTable } from '../resources/compile.ts';

/** What a route serves: a resource's item or collection, a pass-through route, or a document (API root, OpenAPI). */
export type RouteKind = 'item' | 'collection' | 'pass-through' | 'document';

/** How reads of a route are kept in the response cache; null in a row: never stored there. */
export interface CacheRule {
  readonly maxAgeSeconds: number;
  /** A collection's items are stored as items too (collection.cacheItems). */
  readonly cacheItems?: boolean;
}

/** One row of GET /routes: one method at one router pattern. */
export interface RouteRow {
  readonly method: string;
  readonly path: string;
  readonly kind: RouteKind;
  /** The resources.<name> or routes.<name> it comes from; null for a document. */
  readonly name: string | null;
  /** Scopes a bearer token must all carry (as the OpenAPI document says); empty when none is needed. */
  readonly scopes: readonly string[];
  /** Answered without a token (a public pass-through route's reads, the documents). */
  readonly public: boolean;
  /** The upstream service it calls; null for a document. */
  readonly service: string | null;
  /** The upstream path template it calls; null for a document. */
  readonly upstream: string | null;
  readonly cache: CacheRule | null;
  /** The handler reads a request body. */
  readonly body: boolean;
}

const READS = new Set(['GET', 'HEAD']);

function resourceRow(def: RouteDef, r: CompiledResource, collection: boolean): Omit<RouteRow, 'method' | 'path' | 'scopes' | 'public' | 'body'> {
  const read = READS.has(def.method);
  const c = collection ? r.collection : null;
  const cache: CacheRule | null = !read ? null : c === null ? { maxAgeSeconds: r.maxAgeSeconds } : { maxAgeSeconds: r.maxAgeSeconds, cacheItems: c.cacheItems };
  return {
    kind: collection ? 'collection' : 'item',
    name: r.name,
    service: r.service.name,
    upstream: (c === null ? r.upstream : c.upstream).target.text,
    cache,
  };
}

/**
 * The route table as the router serves it: each row is one of the router's own definitions (the
 * list it was built from, which the OpenAPI document also reads), told apart and described with
 * the compiled resource and pass-through tables it came from; nothing is listed twice by hand.
 */
export function routeRows(routes: readonly RouteDef[], table: ResourceTable, passthrough: readonly CompiledRoute[]): RouteRow[] {
  const items = new Map<string, CompiledResource>();
  const collections = new Map<string, CompiledResource>();
  for (const r of table.resources) {
    items.set(r.item.route, r);
    if (r.collection !== null) collections.set(r.collection.path.route, r);
  }
  const byLabel = new Map(passthrough.map((p) => [p.label, p]));
  return routes.map((def): RouteRow => {
    const scopes = def.doc?.scopes ?? [];
    const common = { method: def.method, path: def.path, scopes, public: def.doc?.public ?? scopes.length === 0, body: def.acceptsBody === true };
    const item = items.get(def.path);
    if (item !== undefined) return { ...common, ...resourceRow(def, item, false) };
    const collection = collections.get(def.path);
    if (collection !== undefined) return { ...common, ...resourceRow(def, collection, true) };
    const route = byLabel.get(def.path);
    if (route !== undefined) return { ...common, kind: 'pass-through', name: route.name, service: route.service, upstream: route.upstream.text, cache: null };
    return { ...common, kind: 'document', name: null, service: null, upstream: null, cache: null };
  });
}
