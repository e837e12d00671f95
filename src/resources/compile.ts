import { createHash } from 'node:crypto';
import type { ClaimTable } from '../auth/claims.ts';
import type { CollectionConfig, Config, FieldTypeName, ResourceConfig, WriteOrReadMethod } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { UpstreamServices } from '../upstream/services.ts';
import { JsonPointer } from './json-pointer.ts';
import { fieldNames, fieldPointers } from './fields.ts';
import { LinkTemplate } from './link-template.ts';
import { compilePaging, type CompiledPaging } from './compile-paging.ts';
import { declarationText } from './declaration-text.ts';
import { QueryModel } from './query-model.ts';
import { splitTemplate } from './query-text.ts';
import { compileSchemaFile, type SchemaValidators } from './json-schema.ts';
import { compileVary, withVariants, type CompiledVary } from './identity.ts';
import { notFoundIdentity, ownerNoun } from './naming.ts';
import { OWN_PATHS } from './own-paths.ts';
import type { ParamType, ParamValue } from './params.ts';
import { ancestorsOf, Projection } from './projection.ts';
import { PathTemplate } from './template.ts';

/**
 * Where a link template's parameter comes from: the path's values, or a field of the record (`field`
 * as written, `parts` its dotted parts: the field, then the members below it).
 */
export type LinkSource = { readonly param: number } | { readonly field: string; readonly parts: readonly string[] };

/** A declared path (an item's or a collection's) with its parameter types and declared query: what a link may lead to. */
export interface LinkTarget {
  readonly template: PathTemplate;
  readonly types: readonly ParamType[];
  /** The query parameters the path takes; null when it declares none. */
  readonly query: QueryModel | null;
}

/** A variable of a link's query expression: its name and where its value comes from. */
export interface LinkQuerySource {
  readonly name: string;
  readonly source: LinkSource;
}

/** One declared link: the relation, its template, and a source per path parameter and per query variable. */
export interface CompiledLink {
  readonly rel: string;
  readonly template: LinkTemplate;
  readonly sources: readonly LinkSource[];
  /** The variables of its query expression (`{?brand}`), in the order written; empty for none. */
  readonly query: readonly LinkQuerySource[];
  /**
   * The declared paths a link with parameters may lead to: the path it builds must fit one of
   * them, types included, or the link is left out (a record's "abc" for an integer id would link
   * to a 404). Empty for a link without parameters (the API root, the OpenAPI document).
   */
  readonly targets: readonly LinkTarget[];
}

/** Where a collection's total count is: a pointer into the body, or a response header (lower case). */
export type TotalSource = { readonly pointer: JsonPointer; readonly header?: undefined } | { readonly header: string; readonly pointer?: undefined };

export interface CompiledCollection {
  readonly path: PathTemplate;
  readonly types: readonly ParamType[];
  /** The upstream path of the collection, from the collection's values (without its fixed query). */
  readonly upstream: Projection;
  /** The fixed query of the upstream template (`per_page=100`), '' for none. */
  readonly fixedQuery: string;
  readonly items: JsonPointer;
  readonly total: TotalSource | null;
  readonly paged: boolean;
  /** How the upstream pages; null for a collection answered whole. */
  readonly paging: CompiledPaging | null;
  /** The declared query parameters; null when none are declared. */
  readonly query: QueryModel | null;
  /**
   * Declares nothing a request's query must be read for beyond today's offset and limit (no
   * declared parameters, no fixed query, offset paging under the shipped names and limits, or a
   * whole list): such a collection is served by the shipped code path, which reads no other query.
   */
  readonly plain: boolean;
  readonly cacheItems: boolean;
  /** An upstream 404 for it: a 404 for a collection below an item (that item may not exist), a 502 for a top-level one (the upstream lacks it). */
  readonly nested: boolean;
  /** Declared links, over the collection path's parameters. */
  readonly links: readonly CompiledLink[];
  /** For each item parameter: its index in the collection's values, or -1 (from the record). */
  readonly itemParamSources: readonly number[];
  /** Groups of the collection's entries (its pages): the collection itself and what it lies below. */
  groups(values: readonly ParamValue[]): string[];
  /** Invalidation group of this collection's pages, from the collection's values. */
  pagesGroup(values: readonly ParamValue[]): string;
  /** The owner parameter's index in the collection's values, or -1 when the path lacks it. */
  readonly ownerParam: number;
  /** The declared item this collection lies below (orders: their customer), with its path from the collection's values. */
  parent(): { readonly resource: CompiledResource; readonly path: Projection } | null;
  /**
   * May a member be stored as the item at `path`? Only when the resource's own item route is the
   * one route of the table that matches it: a path another template also matches (a literal
   * `featured` shop, the OpenAPI document) may be answered by that other resource, under its own
   * scope, and must never find this collection's record there.
   */
  storesMemberAt(path: string): boolean;
}

/** A resource declaration compiled once at start (or reload): everything a request needs, precomputed. */
export interface CompiledResource {
  readonly name: string;
  /** The declaration as written (JSON): what its renderings depend on, for ETags (etag.ts renderSuffix). */
  readonly declaration: string;
  /**
   * A digest of everything its stored renderings depend on: the name (the embedded relation of its
   * pages), the declaration (fields, exposed fields, links, templates, collection) and the lifetime
   * (their Cache-Control). The shared tier adopts only entries made under the same one.
   */
  readonly fingerprint: string;
  /** The noun for one item (problem codes, messages, schema names). */
  readonly singular: string;
  /** The API root's relation for the item template, or null. */
  readonly rel: string | null;
  readonly item: PathTemplate;
  /** Parameter types, in the item path's order; the last parameter names the item. */
  readonly types: readonly ParamType[];
  readonly identityField: string;
  /** The upstream path of one item (without its fixed query). */
  readonly upstream: Projection;
  /** The fixed query of the item's upstream template, '' for none. */
  readonly fixedQuery: string;
  /** The declared query parameters of an item; null when none are declared (its query is then ignored, as before). */
  readonly query: QueryModel | null;
  readonly service: UpstreamClient;
  readonly record: JsonPointer;
  /** The public names of `fields`, in order. */
  readonly fields: readonly string[];
  readonly fieldTypes: Readonly<Record<string, FieldTypeName>>;
  /** The public names of `exposeFields`, in order. */
  readonly exposeFields: readonly string[];
  /** Where each field taken from a pointer is in the record (public name → pointer); null when none is (fields.ts). */
  readonly pointers: ReadonlyMap<string, JsonPointer> | null;
  /** Fields a write may not set. */
  readonly readOnlyFields: ReadonlySet<string>;
  readonly links: readonly CompiledLink[];
  readonly scope: string;
  /** Its reads (item and collection) need no credentials. */
  readonly public: boolean;
  /** The owner rule: the claim's index in the ClaimTable, the parameter's index in the item path, and what it owns in words (ownerNoun). */
  readonly owner: { readonly claim: number; readonly param: number; readonly noun: string } | null;
  readonly maxAgeSeconds: number;
  readonly collection: CompiledCollection | null;
  /** Methods it takes (GET means GET and HEAD). */
  readonly methods: ReadonlySet<WriteOrReadMethod>;
  /** Scope a write needs. */
  readonly writeScope: string;
  readonly requireIfMatch: boolean;
  readonly idempotencyRequired: boolean;
  /** The request-body validators of `schema`, compiled once; null when none is declared. */
  readonly schema: SchemaValidators | null;
  /** Invalidation groups of an item's entry: every declared item it lies below. */
  groups(values: readonly ParamValue[]): string[];
  /**
   * What a change to the item at `path` (with these values) makes stale: the item in every format,
   * every cached page of its collection, and with `below` everything below it (a delete).
   */
  invalidation(path: string, values: readonly ParamValue[], below: boolean): { keys: string[]; groups: string[] };
  /** The 404 the upstream's "no such item" becomes. */
  notFound(): HgError;
  /**
   * What its answers vary with (identity.ts): null for one that varies with nothing, whose routes
   * key the cache by path alone. Chosen here, once, so a hit on such a resource does no more work.
   */
  readonly vary: CompiledVary | null;
}

/** The compiled table: the router, the API root, the OpenAPI document and purge all read it. */
export interface ResourceTable {
  readonly resources: readonly CompiledResource[];
  /** The resource whose item path matches `path` exactly, with its values; null when none does. */
  matchItem(path: string): { resource: CompiledResource; values: ParamValue[] } | null;
  /** The resource whose collection path matches `path` exactly, with the collection's values. */
  matchCollection(path: string): { resource: CompiledResource; values: ParamValue[] } | null;
}

const BELOW = 'below:';
const PAGES = 'pages:';
/** Every cached spelling of an item with declared query parameters (`/api/products/7?lang=de`). */
const QUERIED = 'queried:';

/** The declared parameters, or null when there are none: then no request reads them. */
function queryModel(declared: ResourceConfig['query']): QueryModel | null {
  return Object.keys(declared).length === 0 ? null : new QueryModel(declared);
}

function totalSource(total: CollectionConfig['total']): TotalSource | null {
  if (total === null) return null;
  return typeof total === 'string' ? { pointer: JsonPointer.compile(total) } : { header: total.header.toLowerCase() };
}

function compileLinks(links: Readonly<Record<string, string>>, params: readonly string[], declared: readonly LinkTarget[]): CompiledLink[] {
  const sourceOf = (name: string): LinkSource => {
    const index = params.indexOf(name);
    return index === -1 ? { field: name, parts: name.split('.') } : { param: index };
  };
  return Object.entries(links).map(([rel, text]) => {
    const template = LinkTemplate.parse(text);
    const sources = template.path.params.map(sourceOf);
    const query = template.query.map((name) => ({ name, source: sourceOf(name) }));
    const targets = template.params.length === 0 ? [] : declared.filter((target) => template.path.mayLeadTo(target.template));
    return { rel, template, sources, query, targets };
  });
}

/** Every declared item and collection path with its parameter types and declared query. */
function linkTargets(config: Config): LinkTarget[] {
  return Object.values(config.resources).flatMap((r) => {
    const typed = (text: string, query: ResourceConfig['query']): LinkTarget => {
      const template = PathTemplate.parse(text);
      return { template, types: template.params.map((p) => r.params[p] as ParamType), query: queryModel(query) };
    };
    return r.collection === null ? [typed(r.path, r.query)] : [typed(r.path, r.query), typed(r.collection.path, r.collection.query)];
  });
}

/** A declared item template with its noun, for what lies below what. */
interface Known {
  readonly template: PathTemplate;
  readonly singular: string;
}

const singularOf = (name: string, r: ResourceConfig): string => r.singular ?? r.rel ?? name;

/** What compiling one declaration reads besides the declaration: the config, the services, the claim table and the other declarations. */
interface CompileInputs {
  readonly config: Config;
  readonly services: UpstreamServices;
  readonly claims: ClaimTable;
  readonly known: readonly Known[];
  /** Every declared path with its types, for the links. */
  readonly targets: readonly LinkTarget[];
  /** The compiled resource whose item template has this shape (looked up once every resource is compiled). */
  readonly byShape: (shape: string) => CompiledResource | undefined;
  /** How many of the table's routes (items, collections, the gateway's own paths) match `path`. */
  readonly routesMatching: (path: string) => number;
}

function compileOne(name: string, r: ResourceConfig, inputs: CompileInputs): CompiledResource {
  const { config, services, claims, known, byShape, targets, routesMatching } = inputs;
  const item = PathTemplate.parse(r.path);
  const items = known.map((k) => k.template);
  const params = item.params;
  const types = params.map((p) => r.params[p] as ParamType);
  const singular = singularOf(name, r);
  const identity = notFoundIdentity(singular);
  const ancestors = ancestorsOf(item, items);
  // "No order exists with this id for this customer.": the nearest item it lies below, if any.
  const parentShape = ancestors[ancestors.length - 1]?.target.shape;
  const parent = known.find((k) => k.template.shape === parentShape)?.singular;
  const detail = `No ${singular} exists with this ${params[params.length - 1]}${parent === undefined ? '' : ` for this ${parent}`}.`;
  const ownerClaim = r.owner === null ? null : (r.owner.claim ?? config.auth.ownerClaim);
  const owner =
    r.owner === null || ownerClaim === null
      ? null
      : { claim: claims.indexOf(ownerClaim), param: params.indexOf(r.owner.param), noun: ownerNoun(r.owner.param, params, singular) };
  const groupsOf =
    (projections: readonly Projection[]) =>
    (values: readonly ParamValue[]): string[] =>
      projections.map((p) => BELOW + p.build(values));
  let collection: CompiledCollection | null = null;
  let collectionOfItem: Projection | null = null;
  if (r.collection !== null) {
    const c = r.collection;
    const path = PathTemplate.parse(c.path);
    const above = ancestorsOf(path, items);
    const collectionAncestors = groupsOf(above);
    const nearest = above[above.length - 1];
    const pagesGroup = (values: readonly ParamValue[]): string => PAGES + path.build(values);
    collectionOfItem = new Projection(params, path);
    const upstream = splitTemplate(c.upstream);
    const paging = c.paged ? compilePaging(c.paging) : null;
    const query = queryModel(c.query);
    const total = totalSource(c.total);
    collection = {
      path,
      types: path.params.map((p) => r.params[p] as ParamType),
      upstream: new Projection(path.params, PathTemplate.parse(upstream.path)),
      fixedQuery: upstream.query,
      items: JsonPointer.compile(c.items),
      total,
      paged: c.paged,
      paging,
      query,
      plain: query === null && upstream.query === '' && (paging === null || paging.shipped) && total?.header === undefined,
      cacheItems: c.cacheItems,
      nested: path.params.length > 0,
      links: compileLinks(c.links, path.params, targets),
      itemParamSources: params.map((p) => path.params.indexOf(p)),
      groups: (values) => [pagesGroup(values), ...collectionAncestors(values)],
      pagesGroup,
      ownerParam: r.owner === null ? -1 : path.params.indexOf(r.owner.param),
      parent: () => {
        const resource = nearest === undefined ? undefined : byShape(nearest.target.shape);
        return resource === undefined || nearest === undefined ? null : { resource, path: nearest };
      },
      // The member's path is built from its own values, so the item route matches it: alone, or not.
      storesMemberAt: (memberPath) => c.cacheItems && routesMatching(memberPath) === 1,
    };
  }
  const declaration = declarationText(r);
  const vary = compileVary(config, r, claims);
  const itemUpstream = splitTemplate(r.upstream);
  const itemQuery = queryModel(r.query);
  const itemGroups = groupsOf(ancestors);
  const maxAgeSeconds = r.maxAgeSeconds ?? config.cache.maxAgeSeconds;
  return {
    name,
    declaration,
    fingerprint: createHash('sha256')
      .update(JSON.stringify([name, declaration, maxAgeSeconds]))
      .digest('base64url')
      .slice(0, 22),
    singular,
    rel: r.rel,
    item,
    types,
    identityField: params[params.length - 1] as string,
    upstream: new Projection(params, PathTemplate.parse(itemUpstream.path)),
    fixedQuery: itemUpstream.query,
    query: itemQuery,
    service: services.get(r.service),
    record: JsonPointer.compile(r.record),
    fields: fieldNames(r.fields),
    fieldTypes: r.fieldTypes,
    exposeFields: fieldNames(r.exposeFields),
    pointers: fieldPointers(r),
    readOnlyFields: new Set(r.readOnlyFields),
    links: compileLinks(r.links, params, targets),
    scope: r.scope ?? config.auth.requiredScope,
    public: r.public,
    owner,
    maxAgeSeconds,
    collection,
    methods: new Set(r.methods),
    writeScope: r.writeScope ?? `${name}:write`,
    requireIfMatch: r.requireIfMatch,
    idempotencyRequired: r.idempotency === 'required',
    schema: r.schema === null ? null : compileSchemaFile(r.schema),
    // An item read with a query is cached under each spelling: a change to the item drops them all.
    groups: itemQuery === null ? itemGroups : (values) => [QUERIED + item.build(values), ...itemGroups(values)],
    invalidation: (path, values, below) => {
      const groups = below ? [BELOW + path] : [];
      if (itemQuery !== null) groups.push(QUERIED + path);
      if (collectionOfItem !== null) groups.push(PAGES + collectionOfItem.build(values));
      return vary === null ? { keys: [path], groups } : withVariants({ keys: [path], groups });
    },
    vary,
    notFound: () => new HgError('HG_ERR_RESOURCE_NOT_FOUND', { detail, identity }),
  };
}

/** Compiles every declared resource (config validation has checked the table's rules). */
export function compileResources(config: Config, services: UpstreamServices, claims: ClaimTable): ResourceTable {
  const declared = Object.entries(config.resources);
  const known = declared.map(([name, r]) => ({ template: PathTemplate.parse(r.path), singular: singularOf(name, r) }));
  const resources: CompiledResource[] = [];
  // Parents are looked up when first needed, once every resource is compiled.
  const byShape = (shape: string): CompiledResource | undefined => resources.find((r) => r.item.shape === shape);
  const targets = linkTargets(config);
  // Every route of the table: the gateway's own paths, and each declared item and collection.
  const routes: LinkTarget[] = [...OWN_PATHS.map((p) => ({ template: PathTemplate.parse(p), types: [], query: null })), ...targets];
  const routesMatching = (path: string): number => routes.reduce((n, route) => (route.template.fits(path, route.types) ? n + 1 : n), 0);
  const inputs: CompileInputs = { config, services, claims, known, byShape, targets, routesMatching };
  for (const [name, r] of declared) resources.push(compileOne(name, r, inputs));
  const matchWith = (pick: (r: CompiledResource) => { t: PathTemplate; types: readonly ParamType[] } | null) => (path: string) => {
    for (const resource of resources) {
      const target = pick(resource);
      if (target === null) continue;
      const values: ParamValue[] = [];
      if (target.t.match(path, target.types, values)) return { resource, values };
    }
    return null;
  };
  return {
    resources,
    matchItem: matchWith((r) => ({ t: r.item, types: r.types })),
    matchCollection: matchWith((r) => (r.collection === null ? null : { t: r.collection.path, types: r.collection.types })),
  };
}
