import type { IncomingMessage } from 'node:http';
import type { GatewayContext } from './context.ts';
import type { HgResponse } from '../protocol/response.ts';
import { getAndHead, type RouteDef } from '../protocol/route.ts';
import type { Link, Resource } from '../hypermedia/resource.ts';
import type { Access } from './access.ts';
import type { ResourceTable } from './compile.ts';
import type { Config } from '../config/types.ts';
import { ReadThrough } from './read-through.ts';
import { API_ROOT, OPENAPI_PATH } from './own-paths.ts';
import type { ServingParts } from './serving-parts.ts';
import type { Source } from './source.ts';

export { API_ROOT, OPENAPI_PATH };

/**
 * Everything a client may start from: the only URL a hypermedia client needs to know. From the
 * table: each collection whose path has no parameter, under the resource's name, and each item
 * template under the resource's rel (RFC 6570, templated); then this document's description.
 * When some resource is public, `public` lists the relations anyone may read without credentials.
 */
export function apiRootResource(table: ResourceTable, config: Config | null = null): Resource {
  const links: Record<string, Link> = { self: API_ROOT };
  // Relations whose reads need no credentials (public resources), so a client knows before it tries.
  const open: string[] = [];
  for (const r of table.resources) {
    if (r.collection !== null && r.collection.path.params.length === 0) {
      links[r.name] = r.collection.path.text;
      if (r.public) open.push(r.name);
    }
    if (r.rel !== null) {
      links[r.rel] = { href: r.item.text, templated: true };
      if (r.public) open.push(r.rel);
    }
  }
  links['describedby'] = OPENAPI_PATH;
  const fields: Record<string, unknown> = open.length === 0 ? {} : { public: open };
  const embeddable = config === null ? {} : embeddableOf(table, config);
  if (Object.keys(embeddable).length > 0) fields['embeddable'] = embeddable;
  return { fields, links };
}

/**
 * What a client may ask to embed (`?embed=`, resources.md "Embedding"), by the root's relation:
 * an item template's declared relations, a collection's own and its members' (`items.<rel>`).
 * Empty when nothing declares any, so such a root stays as it was.
 */
function embeddableOf(table: ResourceTable, config: Config): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of table.resources) {
    const declared = config.resources[r.name];
    if (declared == null) continue;
    const itemRels = Object.keys(declared.embed);
    if (r.collection !== null && r.collection.path.params.length === 0 && declared.collection !== null) {
      const rels = [...Object.keys(declared.collection.embed), ...itemRels.map((rel) => `items.${rel}`)];
      if (rels.length > 0) out[r.name] = rels;
    }
    if (r.rel !== null && itemRels.length > 0) out[r.rel] = itemRels;
  }
  return out;
}

/** The API root's path has no parameters. */
const NO_VALUES: readonly never[] = Object.freeze([]);

/** GET/HEAD /api. */
export function apiRootRoutes(ctx: GatewayContext, parts: ServingParts, access: Access, table: ResourceTable): RouteDef[] {
  const root = apiRootResource(table, ctx.config);
  const { entries } = parts;
  // Made here, not upstream: it is rendered once per freshness period and served from the cache.
  const source: Source = {
    local: true,
    groups: () => [],
    load: (path, _values, _call, ticket) =>
      Promise.resolve(entries.store(path, root, { freshness: entries.localFreshness(), groups: [], embeddedRel: null, ticket })),
    notFound: () => {
      throw new Error('the API root always exists');
    },
  };
  const reader = new ReadThrough(parts, source);
  const scope = ctx.config.auth.requiredScope;
  const readRoot = (req: IncomingMessage, res: HgResponse): void | Promise<void> => {
    const principal = access.scoped(req, scope);
    return principal instanceof Promise ? principal.then(() => reader.respond(req, res, API_ROOT, NO_VALUES)) : reader.respond(req, res, API_ROOT, NO_VALUES);
  };
  const rels = Object.keys(root.links);
  return getAndHead(API_ROOT, readRoot, {
    operationId: 'getApiRoot',
    summary: 'The API root',
    description: `Links to everything a client may do: ${rels.join(', ')}. Item templates (RFC 6570) are marked templated.`,
    params: [],
    scopes: [scope],
    ok: { description: 'The API root.', content: { 'application/json': 'ApiRoot', 'application/hal+json': 'ApiRootHal' } },
    errors: [],
  });
}
