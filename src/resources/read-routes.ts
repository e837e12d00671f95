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
import { DEFAULT_LIMIT, MAX_LIMIT, pagePath, parsePageQuery, refuseQuery } from './page-query.ts';
import { paramRule, paramSchema, type ParamType, type ParamValue } from './params.ts';
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

/** What the OpenAPI description says of a varying resource's cache: '' for one that varies with nothing. */
function perIdentity(r: CompiledResource): string {
  const vary = r.vary;
  if (vary === null) return '';
  const by = [...vary.claims.map(([name]) => `the token's ${name} claim`), ...vary.varyHeaders.map((h) => `the ${h} header`)];
  return `, separately for each value of ${by.join(' and ')}`;
}

/** GET/HEAD of one item: the hot path (a cached token and a cached entry write bytes and nothing else). */
function itemRoutes(r: CompiledResource, reader: ReadThrough, access: Access): RouteDef[] {
  // The handler is synchronous up to a cache hit, so one array serves every request; it is
  // copied before anything waits (here, or in ReadThrough.respond on a miss).
  const scratch: ParamValue[] = [];
  const vary = r.vary;
  // Chosen once: a resource that varies with nothing keys its entries by path alone, as it always did.
  const respond =
    vary === null
      ? (req: IncomingMessage, res: HgResponse, path: string, values: readonly ParamValue[], p: Principal): void | Promise<void> => reader.respond(req, res, path, values, p.claims)
      : (req: IncomingMessage, res: HgResponse, path: string, values: readonly ParamValue[], p: Principal): void | Promise<void> => reader.respond(req, res, identityKey(path, vary, p.claims, req), values, p.claims);
  const read = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    if (!r.item.match(path, r.types, scratch)) throw routeNotFound();
    const principal = access.item(req, r, scratch);
    if (principal instanceof Promise) {
      const values = scratch.slice();
      return principal.then((p) => respond(req, res, path, values, p));
    }
    return respond(req, res, path, scratch, principal);
  };
  const errors: HgErrorCode[] = ['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_RESOURCE_NOT_FOUND', ...(r.owner === null ? [] : (['HG_ERR_NOT_OWNER'] as const)), ...upstreamErrors(r.service)];
  return getAndHead(r.item.route, read, {
    operationId: `get${schemaName(r.singular)}`,
    summary: `Read one ${r.singular}`,
    description: `One ${r.singular} with its links (${['self', ...r.links.map((l) => l.rel)].join(', ')}). Cached for up to ${r.maxAgeSeconds} s${perIdentity(r)}; conditional with If-None-Match.`,
    params: pathParams(r, r.item.params, r.types),
    scopes: access.scopesOf(r, false),
    ok: { description: `The ${r.singular}.`, content: { 'application/json': schemaName(r.singular), 'application/hal+json': `${schemaName(r.singular)}Hal` } },
    errors,
    notFound: r.notFound().identity,
  }, (path) => r.item.fits(path, r.types));
}

/** GET/HEAD of a collection: a page (offset/limit, canonical self) or the whole list. */
function collectionRoutes(r: CompiledResource, c: CompiledCollection, parts: ServingParts, access: Access, items: ItemReaders): RouteDef[] {
  const whole = c.paged ? null : new ReadThrough(parts, new CollectionSource(r, c, parts.entries, null, items));
  const vary = r.vary;
  const read = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    const values: ParamValue[] = [];
    if (!c.path.match(path, c.types, values)) throw routeNotFound();
    const serve = ({ claims }: Principal): void | Promise<void> => {
      if (whole !== null) {
        // The path is the target without its query: a longer target has one.
        if (req.url !== undefined && req.url.length !== path.length) refuseQuery(req.url);
        return whole.respond(req, res, vary === null ? path : identityKey(path, vary, claims, req), values, claims);
      }
      const paging = parsePageQuery(req.url ?? '');
      // A page has its own source (the paging it asks the upstream for).
      const page = new ReadThrough(parts, new CollectionSource(r, c, parts.entries, paging, items));
      const canonical = pagePath(path, paging.offset, paging.limit);
      return page.respond(req, res, vary === null ? canonical : identityKey(canonical, vary, claims, req), values, claims);
    };
    return andThen(access.collection(req, r, values), serve);
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
      : `Every ${r.singular} of the collection, each with links.self. It takes no query parameters: any is a 400 naming it.`,
    params: [...pathParams(r, c.path.params, c.types), ...query],
    scopes: access.scopesOf(r, true),
    ok: { description: `The ${r.name}.`, content: { 'application/json': name, 'application/hal+json': `${name}Hal` } },
    errors: ['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_INVALID_QUERY', ...ownership, ...upstreamErrors(r.service)],
  }, (path) => c.path.fits(path, c.types));
}

/** Every read route of the table: each resource's collection (if declared) and its items. */
export function readRoutes(table: ResourceTable, parts: ServingParts, access: Access): RouteDef[] {
  const items: ItemReaders = new Map(table.resources.map((r) => [r, new ReadThrough(parts, itemSource(r, parts.entries))] as const));
  return table.resources.flatMap((r) => [
    ...(r.collection === null ? [] : collectionRoutes(r, r.collection, parts, access, items)),
    ...itemRoutes(r, items.get(r) as ReadThrough, access),
  ]);
}
