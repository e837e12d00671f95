import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/verifier.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { andThen } from '../lib/sync-or-promise.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { ParamDoc } from '../protocol/route-doc.ts';
import { getAndHead, type RouteDef } from '../protocol/route.ts';
import type { Access } from './access.ts';
import { identityKey } from './identity.ts';
import type { CompiledCollection, CompiledResource, ResourceTable } from './compile.ts';
import { ReadThrough, upstreamErrors } from './read-through.ts';
import { CollectionSource, itemSource, type ItemReaders } from './read-sources.ts';
import type { ServingParts } from './serving-parts.ts';
import { collectionDescription, declaredQueryDocs, pagingParams } from './query-docs.ts';
import { readCollectionQuery } from './collection-query.ts';
import { pagePath } from './page-asks.ts';
import { parsePageQuery, refuseQuery } from './page-query.ts';
import { readItemQuery } from './item-query.ts';
import { paramRule, paramSchema, type ParamType, type ParamValue } from './params.ts';
import { schemaName } from './naming.ts';
import { embedParamDocs, withEmbedding, type CollectionLocator, type EmbedHook, type ReadHandler, type ReadPaths } from './embed-hook.ts';

/** Only the canonical spelling of a path names a resource: anything else is the router's plain 404. */
function routeNotFound(): HgError {
  return new HgError('HG_ERR_ROUTE_NOT_FOUND');
}

function pathParams(r: CompiledResource, names: readonly string[], types: readonly ParamType[]): ParamDoc[] {
  return names.map((name, i) => ({
    name,
    in: 'path' as const,
    required: true,
    description: `${name === r.identityField && names.length === r.item.params.length ? `The ${r.singular}'s identifier` : `Path parameter ${name}`}. ${paramRule(types[i] as ParamType)}`,
    schema: paramSchema(types[i] as ParamType),
  }));
}

/** What the OpenAPI description says of a varying resource's cache: '' for one that varies with nothing. */
function perIdentity(r: CompiledResource): string {
  const vary = r.vary;
  if (vary === null) return '';
  const by = [...vary.claims.map(([name]) => `the token's ${name} claim`), ...vary.varyHeaders.map((h) => `the ${h} header`)];
  return `, separately for each value of ${by.join(' and ')}`;
}

/** Who may read an item or a page: the resource's access rule, chosen once per resource rather than per request. */
type ReadRule = (access: Access, req: IncomingMessage, r: CompiledResource, values: readonly ParamValue[]) => Principal | Promise<Principal>;
const collectionRule: ReadRule = (access, req, r, values) => access.collection(req, r, values);
const itemRule: ReadRule = (access, req, r, values) => access.item(req, r, values);
const publicRule: ReadRule = (access, req, r) => access.publicRead(req, r);

/** The cache key of `key` (a path, with its canonical query if any) for the asker: itself, or with the identity of a resource that varies. */
function keyFor(r: CompiledResource, key: string, claims: Principal['claims'], req: IncomingMessage): string {
  return r.vary === null ? key : identityKey(key, r.vary, claims, req);
}

/**
 * The cache key of the item at `path` (no query: a link's target) for this caller, as its route
 * keys it: with the canonical query of its declared parameters' defaults, and the identity of a
 * resource that varies.
 */
function itemKey(r: CompiledResource, path: string, claims: Principal['claims'], req: IncomingMessage): string {
  return keyFor(r, r.query === null ? path : readItemQuery(r.query, path, path), claims, req);
}

/**
 * The item handler: the hot path (a cached token and a cached entry write bytes and nothing else).
 * The handler is synchronous up to a cache hit, so one array serves every request; it is copied
 * before anything waits (here, or in ReadThrough.respond on a miss). A public resource and a
 * varying one get a handler of their own, so a resource that is neither runs exactly what it ran before.
 */
function itemRead(r: CompiledResource, reader: ReadThrough, access: Access): ReadHandler {
  const scratch: ParamValue[] = [];
  const vary = r.vary;
  if (vary !== null) {
    const rule = r.public ? publicRule : itemRule;
    return (req, res, path) => {
      if (!r.item.match(path, r.types, scratch)) throw routeNotFound();
      const principal = rule(access, req, r, scratch);
      if (principal instanceof Promise) {
        const values = scratch.slice();
        return principal.then((p) => reader.respond(req, res, identityKey(path, vary, p.claims, req), values, p.claims));
      }
      return reader.respond(req, res, identityKey(path, vary, principal.claims, req), scratch, principal.claims);
    };
  }
  if (r.public) {
    return (req, res, path) => {
      if (!r.item.match(path, r.types, scratch)) throw routeNotFound();
      const principal = access.publicRead(req, r);
      if (principal instanceof Promise) {
        const values = scratch.slice();
        return principal.then((p) => reader.respond(req, res, path, values, p.claims));
      }
      return reader.respond(req, res, path, scratch, principal.claims);
    };
  }
  return (req, res, path) => {
    if (!r.item.match(path, r.types, scratch)) throw routeNotFound();
    const principal = access.item(req, r, scratch);
    if (principal instanceof Promise) {
      const values = scratch.slice();
      return principal.then((p) => reader.respond(req, res, path, values, p.claims));
    }
    return reader.respond(req, res, path, scratch, principal.claims);
  };
}

/** GET/HEAD of one item. */
function itemRoutes(r: CompiledResource, reader: ReadThrough, access: Access, embedded: ReadHandler | null, embedDocs: ParamDoc[]): RouteDef[] {
  const read = itemRead(r, reader, access);
  // An item that declares query parameters is cached under its canonical query (a route of its own,
  // so an item that declares none runs the code above and nothing more).
  const model = r.query;
  const rule = r.public ? publicRule : itemRule;
  const readQueried =
    model === null
      ? read
      : (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
          const values: ParamValue[] = [];
          if (!r.item.match(path, r.types, values)) throw routeNotFound();
          return andThen(rule(access, req, r, values), ({ claims }: Principal) =>
            reader.respond(req, res, keyFor(r, readItemQuery(model, path, req.url ?? ''), claims, req), values, claims),
          );
        };
  const errors: HgErrorCode[] = [
    'HG_ERR_ROUTE_NOT_FOUND',
    ...(r.query === null && embedded === null ? [] : (['HG_ERR_INVALID_QUERY'] as const)),
    'HG_ERR_RESOURCE_NOT_FOUND',
    ...(r.owner === null ? [] : (['HG_ERR_NOT_OWNER'] as const)),
    ...upstreamErrors(r.service),
  ];
  return getAndHead(
    r.item.route,
    withEmbedding(readQueried, embedded),
    {
      operationId: `get${schemaName(r.singular)}`,
      summary: `Read one ${r.singular}`,
      description: `One ${r.singular} with its links (${['self', ...r.links.map((l) => l.rel)].join(', ')}). Cached for up to ${r.maxAgeSeconds} s${perIdentity(r)}; conditional with If-None-Match.`,
      params: [...pathParams(r, r.item.params, r.types), ...declaredQueryDocs(r.query), ...embedDocs],
      scopes: access.scopesOf(r, false),
      public: r.public,
      ok: {
        description: `The ${r.singular}.`,
        content: { 'application/json': schemaName(r.singular), 'application/hal+json': `${schemaName(r.singular)}Hal` },
        ...exposedDoc(r),
      },
      errors,
      notFound: r.notFound().identity,
    },
    (path) => r.item.fits(path, r.types),
  );
}

/** The locator of a collection's reads: the whole list, a plain page, or a page under declared parameters and paging. */
function collectionLocator(r: CompiledResource, c: CompiledCollection, parts: ServingParts, items: ItemReaders): CollectionLocator {
  const outcomes = parts.ctx.metrics.cacheOutcomes(r.name);
  const whole = c.paged || !c.plain ? null : new ReadThrough(parts, new CollectionSource(r, c, parts.entries, null, items), outcomes);
  return (req, url, path, claims) => {
    if (whole !== null) {
      // The path is the target without its query: a longer target has one.
      if (url.length !== path.length) refuseQuery(url);
      return { reader: whole, key: keyFor(r, path, claims, req) };
    }
    if (c.plain) {
      const paging = parsePageQuery(url);
      // A page has its own source (the paging it asks the upstream for).
      const page = new ReadThrough(parts, new CollectionSource(r, c, parts.entries, paging, items), outcomes);
      return { reader: page, key: keyFor(r, pagePath(path, paging.offset, paging.limit), claims, req) };
    }
    // Declared parameters, another paging style or a fixed upstream query: the canonical query path.
    const { key, ask } = readCollectionQuery(c, r.name, path, url, parts.cursors);
    return { reader: new ReadThrough(parts, new CollectionSource(r, c, parts.entries, ask, items), outcomes), key: keyFor(r, key, claims, req) };
  };
}

/** GET/HEAD of a collection: a page (canonical self) or the whole list. */
function collectionRoutes(
  r: CompiledResource,
  c: CompiledCollection,
  locate: CollectionLocator,
  access: Access,
  embedded: ReadHandler | null,
  embedDocs: ParamDoc[],
): RouteDef[] {
  const rule = r.public ? publicRule : collectionRule;
  const plainRead = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    const values: ParamValue[] = [];
    if (!c.path.match(path, c.types, values)) throw routeNotFound();
    const serve = ({ claims }: Principal): void | Promise<void> => {
      const { reader, key } = locate(req, req.url ?? '', path, claims);
      return reader.respond(req, res, key, values, claims);
    };
    return andThen(rule(access, req, r, values), serve);
  };
  const read = withEmbedding(plainRead, embedded);
  const name = `${schemaName(r.singular)}${c.paged ? 'Page' : 'List'}`;
  const ownership: HgErrorCode[] = r.owner !== null && c.ownerParam !== -1 ? ['HG_ERR_NOT_OWNER'] : [];
  // Below an item (orders of a customer), a missing item is that item's own 404 (customer-not-found).
  const parent = c.parent();
  return getAndHead(
    c.path.route,
    read,
    {
      operationId: `list${schemaName(r.name)}`,
      summary: c.paged ? `Read a page of ${r.name}` : `Read the ${r.name}`,
      description: collectionDescription(r, c),
      params: [...pathParams(r, c.path.params, c.types), ...declaredQueryDocs(c.query), ...pagingParams(r, c), ...embedDocs],
      scopes: access.scopesOf(r, true),
      public: r.public,
      ok: { description: `The ${r.name}.`, content: { 'application/json': name, 'application/hal+json': `${name}Hal` }, ...exposedDoc(r) },
      errors: [
        'HG_ERR_ROUTE_NOT_FOUND',
        ...(parent === null ? [] : (['HG_ERR_RESOURCE_NOT_FOUND'] as const)),
        'HG_ERR_INVALID_QUERY',
        ...ownership,
        ...upstreamErrors(r.service),
      ],
      ...(parent === null ? {} : { notFound: parent.resource.notFound().identity }),
    },
    (path) => c.path.fits(path, c.types),
  );
}

/** The upstream's headers a read passes on, for its route doc; nothing for a service that exposes none. */
function exposedDoc(r: CompiledResource): { exposedHeaders?: readonly string[] } {
  return r.service.exposeHeaders.length === 0 ? {} : { exposedHeaders: r.service.exposeHeaders };
}

/** Every read route of the table: each resource's collection (if declared) and its items. */
export function readRoutes(table: ResourceTable, parts: ServingParts, access: Access, embedding: EmbedHook | null = null): RouteDef[] {
  const items: ItemReaders = new Map(
    table.resources.map((r) => [r, new ReadThrough(parts, itemSource(r, parts.entries), parts.ctx.metrics.cacheOutcomes(r.name))] as const),
  );
  const collections = new Map<CompiledResource, CollectionLocator>();
  for (const r of table.resources) if (r.collection !== null) collections.set(r, collectionLocator(r, r.collection, parts, items));
  const paths: ReadPaths = { parts, items, collections, itemKey: (r, path, claims, req) => itemKey(r, path, claims, req) };
  return table.resources.flatMap((r) => {
    const locate = collections.get(r);
    return [
      ...(r.collection === null || locate === undefined
        ? []
        : collectionRoutes(r, r.collection, locate, access, embedding?.handlerFor(r, true, paths) ?? null, embedParamDocs(embedding, r, true))),
      ...itemRoutes(r, items.get(r) as ReadThrough, access, embedding?.handlerFor(r, false, paths) ?? null, embedParamDocs(embedding, r, false)),
    ];
  });
}
