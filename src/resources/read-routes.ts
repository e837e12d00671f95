import type { IncomingMessage } from 'node:http';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { ParamDoc } from '../protocol/route-doc.ts';
import { getAndHead, type RouteDef } from '../http/router.ts';
import type { Access } from './access.ts';
import type { CompiledCollection, CompiledResource, ResourceTable } from './compile.ts';
import { UPSTREAM_ERRORS, type ResourceKit, type Source } from './kit.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, pagePath, parsePageQuery } from './page-query.ts';
import { paramRule, paramSchema, type ParamType, type ParamValue } from './params.ts';
import { itemFromRecord, pageFromBody, type Paging } from './record.ts';
import { renderSuffix } from '../protocol/etag.ts';
import { FORMATS } from '../hypermedia/formats.ts';
import { schemaName } from './naming.ts';

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

/** The render suffix of each format for this resource (etag.ts): part of every ETag derived from the upstream's. */
export function suffixesOf(r: CompiledResource, kit: ResourceKit): readonly string[] {
  return FORMATS.map((f) => renderSuffix(r.declaration, f.contentType, kit.vary));
}

/** The source of one item: the upstream's record at the item's upstream path, or a cached absence. */
function itemSource(r: CompiledResource, kit: ResourceKit): Source {
  const suffixes = suffixesOf(r, kit);
  const source: Source = {
    notFound: () => r.notFound(),
    groups: (values) => r.groups(values),
    load: async (path, values, call, ticket) => {
      const result = await r.service.getJson(r.upstream.build(values), call, (json) => itemFromRecord(r, r.record.resolve(json), values, path));
      if (!result.found) throw kit.storeAbsent(path, r.groups(values), source, ticket);
      const validator = result.etag === null ? null : { upstream: result.etag, suffixes };
      return kit.store(path, result.value, { freshness: kit.upstreamFreshness(result, r.maxAgeSeconds), groups: r.groups(values), embeddedRel: null, ticket, validator });
    },
  };
  return source;
}

/** GET/HEAD of one item: the hot path (a cached token and a cached entry write bytes and nothing else). */
function itemRoutes(r: CompiledResource, kit: ResourceKit, access: Access, source: Source): RouteDef[] {
  // The handler is synchronous up to a cache hit, so one array serves every request; it is
  // copied before anything waits (here, or in kit.respond on a miss).
  const scratch: ParamValue[] = [];
  const read = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    if (!r.item.match(path, r.types, scratch)) throw routeNotFound();
    const principal = access.item(req, r, scratch);
    if (principal instanceof Promise) {
      const values = scratch.slice();
      return principal.then((p) => kit.respond(req, res, path, kit.format(req), source, values, p.claims));
    }
    return kit.respond(req, res, path, kit.format(req), source, scratch, principal.claims);
  };
  const errors: HgErrorCode[] = ['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_RESOURCE_NOT_FOUND', ...(r.owner === null ? [] : (['HG_ERR_NOT_OWNER'] as const)), ...UPSTREAM_ERRORS];
  return getAndHead(r.item.route, read, {
    operationId: `get${schemaName(r.singular)}`,
    summary: `Read one ${r.singular}`,
    description: `One ${r.singular} with its links (${['self', ...r.links.map((l) => l.rel)].join(', ')}). Cached for up to ${r.maxAgeSeconds} s; conditional with If-None-Match.`,
    params: pathParams(r, r.item.params, r.types),
    scopes: access.scopesOf(r, false),
    ok: { description: `The ${r.singular}.`, content: { 'application/json': schemaName(r.singular), 'application/hal+json': `${schemaName(r.singular)}Hal` } },
    errors,
    notFound: r.notFound().identity,
  }, (path) => r.item.fits(path, r.types));
}

/** The item sources of the table, so a collection can ask whether the item it lies below exists. */
type Sources = ReadonlyMap<CompiledResource, Source>;

/**
 * The source of one collection page (or the whole unpaged collection); its members fill the item
 * cache. The upstream's 404 for a collection below an item (orders of customer 42) means that
 * item is missing (its own not-found problem) or that it has no such collection: the item is read
 * (usually a cache hit) to say which. For a top-level collection it means the upstream lacks it: 502.
 */
function collectionSource(r: CompiledResource, c: CompiledCollection, kit: ResourceKit, paging: Paging | null, sources: Sources): Source {
  const source: Source = {
    notFound: () =>
      c.nested
        ? new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: `${r.service.who} has no ${r.name} at this path.` })
        : new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `${r.service.who} answered 404 for the ${r.name} collection.` }),
    groups: (values) => c.groups(values),
    load: async (key, values, call, ticket) => {
      const base = c.path.build(values);
      const query = paging === null ? '' : `?offset=${paging.offset}&limit=${paging.limit}`;
      const result = await r.service.getJson(c.upstream.build(values) + query, call, (json) => pageFromBody(r, c, json, values, base, paging));
      if (!result.found) {
        if (!c.nested) throw source.notFound();
        const parent = c.parent();
        const parentSource = parent === null ? undefined : sources.get(parent.resource);
        // Throws the parent's own 404 (customer-not-found) when it is the parent that is missing.
        if (parent !== null && parentSource !== undefined) await kit.fetch(parent.path.build(values), parentSource, parent.path.values(values), call);
        throw kit.storeAbsent(key, c.groups(values), source, ticket);
      }
      const freshness = kit.upstreamFreshness(result, r.maxAgeSeconds);
      // Following a member's self link is then a cache hit.
      if (c.cacheItems) for (const member of result.value.members) kit.store(member.path, member.resource, { freshness, groups: r.groups(member.values), embeddedRel: null, ticket });
      return kit.store(key, result.value.page, { freshness, groups: c.groups(values), embeddedRel: r.name, ticket });
    },
  };
  return source;
}

/** GET/HEAD of a collection: a page (offset/limit, canonical self) or the whole list. */
function collectionRoutes(r: CompiledResource, c: CompiledCollection, kit: ResourceKit, access: Access, sources: Sources): RouteDef[] {
  const whole = c.paged ? null : collectionSource(r, c, kit, null, sources);
  const read = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    const values: ParamValue[] = [];
    if (!c.path.match(path, c.types, values)) throw routeNotFound();
    const serve = (claims: Parameters<ResourceKit['respond']>[6]): void | Promise<void> => {
      if (whole !== null) return kit.respond(req, res, path, kit.format(req), whole, values, claims);
      const paging = parsePageQuery(req.url ?? '');
      return kit.respond(req, res, pagePath(path, paging.offset, paging.limit), kit.format(req), collectionSource(r, c, kit, paging, sources), values, claims);
    };
    const principal = access.collection(req, r, values);
    return principal instanceof Promise ? principal.then((p) => serve(p.claims)) : serve(principal.claims);
  };
  const name = `${schemaName(r.singular)}${c.paged ? 'Page' : 'List'}`;
  const query: ParamDoc[] = c.paged
    ? [
        { name: 'offset', in: 'query', required: false, description: `Index of the first ${r.singular} of the page.`, schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 } },
        { name: 'limit', in: 'query', required: false, description: `${schemaName(r.name)} per page.`, schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT } },
      ]
    : [];
  const ownership: HgErrorCode[] = r.owner !== null && c.ownerParam !== -1 ? ['HG_ERR_NOT_OWNER'] : [];
  return getAndHead(c.path.route, read, {
    operationId: `list${schemaName(r.name)}`,
    summary: c.paged ? `Read a page of ${r.name}` : `Read the ${r.name}`,
    description: c.paged
      ? `${schemaName(r.name)} in pages. links.self is the canonical spelling of the page: both parameters, offset first (${c.path.text}?offset=0&limit=${DEFAULT_LIMIT}), whatever spelling was requested. prev and next appear only where they exist.`
      : `Every ${r.singular} of the collection, each with links.self.`,
    params: [...pathParams(r, c.path.params, c.types), ...query],
    scopes: access.scopesOf(r, true),
    ok: { description: `The ${r.name}.`, content: { 'application/json': name, 'application/hal+json': `${name}Hal` } },
    errors: ['HG_ERR_ROUTE_NOT_FOUND', ...(c.paged ? (['HG_ERR_INVALID_QUERY'] as const) : []), ...ownership, ...UPSTREAM_ERRORS],
  }, (path) => c.path.fits(path, c.types));
}

/** Every read route of the table: each resource's collection (if declared) and its items. */
export function readRoutes(table: ResourceTable, kit: ResourceKit, access: Access): RouteDef[] {
  const sources = new Map(table.resources.map((r) => [r, itemSource(r, kit)] as const));
  return table.resources.flatMap((r) => [
    ...(r.collection === null ? [] : collectionRoutes(r, r.collection, kit, access, sources)),
    ...itemRoutes(r, kit, access, sources.get(r) as Source),
  ]);
}
