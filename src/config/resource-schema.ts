import { routeLimit } from './plan-schema.ts';
import { embeds } from './embed-schema.ts';
import { boolean, integer, map, nonEmptyString, path, scalar, section, string, stringOr, strings, stringsOr } from './rule.ts';

export const PARAM_TYPES = ['integer', 'string'] as const;
export const WRITE_AND_READ_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;

/** A field taken from anywhere in the record under a name of its own: `{"name": "price", "pointer": "/pricing/amount"}`. */
const FIELD = section({
  name: nonEmptyString({ doc: 'The public name of a field taken from `pointer` (an object entry of `fields`, `exposeFields` or `linkFields`).' }),
  pointer: string({ label: 'JSON pointer', doc: 'Where its value is in the record (RFC 6901), e.g. `"/attributes/brand"`.' }),
});

/** A list of fields: each a record member's name, or `{"name", "pointer"}` for a value elsewhere in the record, renamed. */
function fieldList(doc: string) {
  return stringsOr(FIELD, { default: [], doc });
}

/** Relation → template; a null entry removes a relation (a shipped link whose target the operator removed). */
function links(doc: string) {
  return map(nonEmptyString({}), { nullableValues: true, default: {}, doc });
}

export const QUERY_TYPES = ['integer', 'string', 'boolean', 'enum'] as const;
export const PAGING_STYLES = ['offset', 'page', 'cursor', 'link'] as const;

/** One declared query parameter (docs/resources.md "Query parameters"): its type, bounds, default and the upstream's name for it. */
const QUERY_PARAM = section({
  type: string({ oneOf: QUERY_TYPES, doc: '`"integer"`, `"string"`, `"boolean"` (`true` or `false`) or `"enum"` (one of `values`).' }),
  min: integer({
    min: Number.MIN_SAFE_INTEGER,
    max: Number.MAX_SAFE_INTEGER,
    nullable: true,
    default: null,
    doc: 'Least value of an integer parameter; `null`: no bound below.',
  }),
  max: integer({
    min: Number.MIN_SAFE_INTEGER,
    max: Number.MAX_SAFE_INTEGER,
    nullable: true,
    default: null,
    doc: 'Greatest value of an integer parameter; `null`: no bound above.',
  }),
  pattern: string({
    label: 'regular expression',
    nullable: true,
    default: null,
    doc: "A string parameter's whole value must match it (JavaScript syntax, `u` flag; anchored at both ends).",
  }),
  maxLength: integer({ min: 1, max: 1024, default: 256, doc: 'Longest value of a string parameter, in characters after percent-decoding.' }),
  values: strings({ nullable: true, default: null, doc: 'The values an `"enum"` parameter takes, compared exactly.' }),
  list: boolean({ default: false, doc: 'The parameter takes a comma-separated list of values of its type (`?status=open,closed`), kept in the order given.' }),
  maxItems: integer({ min: 1, max: 100, default: 20, doc: 'Most values a list parameter takes.' }),
  required: boolean({ default: false, doc: 'A request without it is a 400.' }),
  default: scalar({
    nullable: true,
    default: null,
    doc: 'The value when the request has none (then it is in `self` and sent upstream like a given one); `null`: absent.',
  }),
  upstream: nonEmptyString({ nullable: true, default: null, doc: 'The upstream\'s name for it (`"filter[status]"`); `null`: the same name.' }),
});

/** Public parameter name → declaration; the names `limit`, `offset` and `cursor` belong to paging. */
function query(doc: string) {
  return map(QUERY_PARAM, { default: {}, doc });
}

/** How the upstream pages (docs/resources.md "Paging styles"); the public side always has its own links. */
const PAGING = section(
  {
    style: string({
      oneOf: PAGING_STYLES,
      default: 'offset',
      doc: '`"offset"` (offset and limit), `"page"` (page number and size), `"cursor"` (a cursor from the body, or a has-more flag and the last item\'s key) or `"link"` (the next page from the `Link` header, RFC 8288).',
    }),
    defaultLimit: integer({ min: 1, max: 10_000, default: 20, doc: 'Items per page when the request gives no `limit`.' }),
    maxLimit: integer({ min: 1, max: 10_000, default: 100, doc: 'Largest `limit` a request may ask for.' }),
    offsetParam: nonEmptyString({ default: 'offset', doc: "`offset` style: the upstream's offset parameter." }),
    limitParam: nonEmptyString({ default: 'limit', doc: "`offset` style: the upstream's limit parameter." }),
    pageParam: nonEmptyString({ default: 'page', doc: "`page` style: the upstream's page-number parameter." }),
    sizeParam: nonEmptyString({
      nullable: true,
      default: null,
      doc: "`page`, `cursor` and `link` styles: the upstream's page-size parameter; `null`: `size`, `limit` and `per_page` respectively.",
    }),
    firstPage: integer({ min: 0, max: 1, default: 1, doc: '`page` style: the number of the first page (0 or 1).' }),
    cursorParam: nonEmptyString({ default: 'cursor', doc: "`cursor` style: the upstream's cursor parameter (Stripe: `starting_after`)." }),
    next: string({
      label: 'JSON pointer',
      nullable: true,
      default: null,
      doc: '`cursor` style: where the next page\'s cursor is in the body (absent, `null` or `""`: the last page).',
    }),
    hasMore: string({
      label: 'JSON pointer',
      nullable: true,
      default: null,
      doc: '`cursor` style, instead of `next`: where a boolean saying whether more pages follow is (Stripe: `/has_more`).',
    }),
    lastKey: nonEmptyString({
      nullable: true,
      default: null,
      doc: '`cursor` style with `hasMore`: the record field whose value on the last item is the next cursor (Stripe: `id`).',
    }),
  },
  {
    nullable: true,
    default: null,
    doc: "The upstream's paging; `null`: offset and limit under those names, as `paged` says. See [Paging styles](resources.md#paging-styles).",
  },
);

const COLLECTION = section(
  {
    path: nonEmptyString({ label: 'template', doc: 'Public path of the collection, e.g. `"/api/products"`.' }),
    upstream: nonEmptyString({ label: 'template', doc: 'Upstream path of the collection.' }),
    items: string({ label: 'JSON pointer', default: '/items', doc: 'Where the array of records is in the answer.' }),
    total: stringOr(
      string({ label: 'JSON pointer' }),
      section({ header: nonEmptyString({ doc: 'The upstream response header that carries the total count, e.g. `"X-Total-Count"`.' }) }),
      {
        nullable: true,
        default: null,
        doc: 'Where the total count is: a JSON pointer into the body, or `{"header": "X-Total-Count"}`; `null`: no `total` field and no `last` link.',
      },
    ),
    paged: boolean({
      default: true,
      doc: 'Paged (`paging` says how the upstream pages; offset/limit when it is `null`), or answered whole (see [Collections and paging](contract.md#collections-and-paging)).',
    }),
    paging: PAGING,
    query: query(
      'Query parameters the collection takes (filters, sorting, search): name → declaration (keys below). Any other parameter is a 400. See [Query parameters](resources.md#query-parameters).',
    ),
    cacheItems: boolean({
      default: true,
      doc: 'Store each item of an answer as the item itself (following its `self` is a cache hit); `false` when list records are abbreviated.',
    }),
    links: links("Relation → template over the collection path's parameters; each must lead to a declared path, `null` removes one."),
    embed: embeds(
      "The collection's own relations a client may embed with `?embed=<rel>` (its members' relations are the item's `embed`, asked as `items.<rel>`). See [Embedding](resources.md#embedding).",
    ),
  },
  { nullable: true, default: null, doc: 'The collection, when there is one (keys below).' },
);

const OWNER = section(
  {
    claim: nonEmptyString({ nullable: true, default: null, doc: 'The token claim; `null`: `auth.ownerClaim` (no rule while that is `null`).' }),
    param: nonEmptyString({ doc: 'The path parameter compared with the claim.' }),
  },
  { nullable: true, default: null, doc: 'Owner rule: a token reads only items whose parameter equals its claim, unless it holds `auth.readAnyScope`.' },
);

const VARY = section(
  {
    claims: strings({
      default: [],
      doc: 'Token claims the answer depends on, e.g. `["tenant"]`: each identity (combination of their values) has its own cache entries.',
    }),
    headers: strings({
      default: [],
      doc: 'Request headers the answer depends on, e.g. `["Accept-Language"]`: part of the cache key (values trimmed, inner spaces collapsed, lower-cased) and named in `Vary`.',
    }),
  },
  {
    nullable: true,
    default: null,
    doc: 'What the answer varies with (see [Identity-aware caching](caching.md#identity-aware-caching)). `null`: what the service forwards (its `forwardClaims` claims, `sub` with `forwardAuthorization`, its `forwardHeaders`), unless `sharedAcrossIdentities`.',
  },
);

/**
 * resources.<name>: the keys a declaration may have (docs/resources.md); a key without
 * a default must be set. Checks that need the resources engine (templates, pointers, colliding
 * paths, link targets) are src/resources/config-checks.ts, run with the rest of validation.
 */
export const RESOURCE = section({
  path: nonEmptyString({
    label: 'template',
    doc: 'Public path of one item, e.g. `"/api/products/{sku}"`; `{param}` segments, the last one names the item. See [resources.md](resources.md).',
  }),
  params: map(string({ oneOf: PARAM_TYPES }), {
    doc: 'The type of each path parameter: `"integer"` (canonical positive decimal) or `"string"` (1-64 of `A-Z a-z 0-9 - . _ ~`).',
  }),
  upstream: nonEmptyString({ label: 'template', doc: 'Upstream path of one item over the same parameters, e.g. `"/v2/products/{sku}"`.' }),
  service: nonEmptyString({ default: 'upstream', doc: 'The upstream service: `upstream` or a key of `upstreams`.' }),
  record: string({ label: 'JSON pointer', default: '', doc: 'Where the record is in the upstream\'s answer (RFC 6901); `"/data"` unwraps `{"data": {...}}`.' }),
  fields: fieldList(
    'Record fields copied into the representation, in this order; each must be present (else 502). An entry is a member\'s name or `{"name": "<public name>", "pointer": "/json/pointer"}` (nested objects and arrays pass as sent). See [Nested records](resources.md#nested-records).',
  ),
  fieldTypes: map(string({ oneOf: FIELD_TYPES }), {
    default: {},
    doc: "Types some fields must have (`string`, `integer`, `number`, `boolean`, `object`, `array`; else 502); the OpenAPI document types them so. An entry for a field not in `fields` or `exposeFields` waits until it is exposed, unless its name looks like a listed field's (a config error with a hint).",
  }),
  exposeFields: fieldList('Further record fields copied when present (data exposure is opt-in); entries as in `fields`.'),
  query: query('Query parameters an item takes, declared as for `collection.query`; an item that declares none ignores its query, as before.'),
  links: links(
    "Relation → path template; names resolve to path parameters, then to record fields (each one declared in `fields`, `exposeFields` or `linkFields`). `self` is always added. Each must lead to a declared path (a resource's `path` or `collection.path`, or `/api`); a relation set to `null` is removed.",
  ),
  embed: embeds(
    'Relations of `links` a client may embed with `?embed=<rel>`: relation → `target`, `kind`, `onError`, `maxParts` (keys below). See [Embedding](resources.md#embedding).',
  ),
  linkFields: fieldList(
    'Record fields that only fill link templates: read from the record, never copied into the representation (e.g. `categoryId` for `/api/categories/{categoryId}`); entries as in `fields`. A link naming a field declared nowhere is refused at start.',
  ),
  readOnlyFields: strings({
    default: [],
    doc: 'Public names of fields (of `fields` or `exposeFields`) a write may not set: a `POST`, `PUT` or `PATCH` body that names one is a 422 naming it; the OpenAPI document marks them `readOnly`.',
  }),
  rel: nonEmptyString({ nullable: true, default: null, doc: "Relation of the item template in the API root's links; `null`: not linked from the root." }),
  singular: nonEmptyString({
    nullable: true,
    default: null,
    doc: 'The noun for one item in problems (`HG_ERR_<SINGULAR>_NOT_FOUND`) and schema names; `null`: `rel`, else the name.',
  }),
  collection: COLLECTION,
  scope: nonEmptyString({ nullable: true, default: null, doc: 'Scope a token needs to read it; `null`: `auth.requiredScope`.' }),
  rateLimit: routeLimit(
    'A limit of its reads (item and collection) per subject, per address for anonymous callers, alongside the caller\'s plan: `{"requestsPerSecond", "burst"}`; `null`: none.',
  ),
  writeRateLimit: routeLimit(
    'A limit of its writes per subject, alongside the caller\'s plan and apart from its reads: `{"requestsPerSecond", "burst"}` (for example 5 writes a second); `null`: none.',
  ),
  public: boolean({
    default: false,
    doc: "`true`: `GET` and `HEAD` of the item and the collection pass without credentials, charged to the client's address (a request that carries `Authorization` still has its token verified; a valid one without `scope` is served as if it had come without); writes still need `writeScope`. Not with an owner rule in force, nor with `vary.claims`, nor on a service with `forwardClaims` or `forwardAuthorization` (see [Public reads](authentication.md#public-reads)).",
  }),
  owner: OWNER,
  maxAgeSeconds: integer({ min: 0, max: 31_536_000, nullable: true, unit: 's', default: null, doc: 'Overrides `cache.maxAgeSeconds` for this resource.' }),
  // Writes (docs/writes.md): GET implies HEAD; POST acts on the collection, the others on an item.
  methods: strings({
    nonEmpty: true,
    oneOf: WRITE_AND_READ_METHODS,
    default: ['GET'],
    doc: 'Methods it takes: `GET` (and so `HEAD`), `POST` (on the collection), `PUT`, `PATCH`, `DELETE` (on an item). Others: 405 with `Allow`. See [writes.md](writes.md).',
  }),
  writeScope: nonEmptyString({ nullable: true, default: null, doc: 'Scope a write needs; `null`: `<name>:write` (e.g. `customers:write`).' }),
  requireIfMatch: boolean({ default: false, doc: '`PUT`, `PATCH` and `DELETE` without `If-Match` get 428 before anything is sent.' }),
  idempotency: string({ oneOf: ['optional', 'required'], default: 'optional', doc: '`"required"`: a `POST` without `Idempotency-Key` is a 400.' }),
  vary: VARY,
  sharedAcrossIdentities: boolean({
    default: false,
    doc: '`true`: the answer does not depend on the identity the service is sent (forwarded claims, token or headers), so all clients share one cache entry per path. Not allowed together with `vary`.',
  }),
  schema: path({
    nullable: true,
    default: null,
    doc: 'A JSON Schema (draft 2020-12) file request bodies are validated against (relative to the config file); failures are 422s listing each field.',
  }),
});
