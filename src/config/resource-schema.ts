import { boolean, integer, map, nonEmptyString, path, section, string, strings } from './rule.ts';

export const PARAM_TYPES = ['integer', 'string'] as const;
export const WRITE_AND_READ_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;

/** Relation → template; a null entry removes a relation (a shipped link whose target the operator removed). */
function links(doc: string) {
  return map(nonEmptyString({}), { nullableValues: true, default: {}, doc });
}

const COLLECTION = section(
  {
    path: nonEmptyString({ label: 'template', doc: 'Public path of the collection, e.g. `"/api/products"`.' }),
    upstream: nonEmptyString({ label: 'template', doc: 'Upstream path of the collection.' }),
    items: string({ label: 'JSON pointer', default: '/items', doc: 'Where the array of records is in the answer.' }),
    total: string({ label: 'JSON pointer', nullable: true, default: null, doc: 'Where the total count is; `null`: no `total` field and no `last` link.' }),
    paged: boolean({ default: true, doc: 'offset/limit paging (see [Collections and paging](contract.md#collections-and-paging)).' }),
    cacheItems: boolean({ default: true, doc: 'Store each item of an answer as the item itself (following its `self` is a cache hit); `false` when list records are abbreviated.' }),
    links: links('Relation → template over the collection path\'s parameters; each must lead to a declared path, `null` removes one.'),
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
    claims: strings({ default: [], doc: 'Token claims the answer depends on, e.g. `["tenant"]`: each identity (combination of their values) has its own cache entries.' }),
    headers: strings({ default: [], doc: 'Request headers the answer depends on, e.g. `["Accept-Language"]`: part of the cache key (values trimmed, inner spaces collapsed, lower-cased) and named in `Vary`.' }),
  },
  {
    nullable: true,
    default: null,
    doc: 'What the answer varies with (see [Identity-aware caching](caching.md#identity-aware-caching)). `null`: what the service forwards (its `forwardClaims` claims, `sub` with `forwardAuthorization`, its `forwardHeaders`), unless `sharedAcrossIdentities`.',
  },
);

/**
 * resources.<name>: the keys a declaration may have (README "Declaring resources"); a key without
 * a default must be set. Checks that need the resources engine (templates, pointers, colliding
 * paths, link targets) are src/resources/config-checks.ts, run with the rest of validation.
 */
export const RESOURCE = section({
  path: nonEmptyString({ label: 'template', doc: 'Public path of one item, e.g. `"/api/products/{sku}"`; `{param}` segments, the last one names the item. See [resources.md](resources.md).' }),
  params: map(string({ oneOf: PARAM_TYPES }), { doc: 'The type of each path parameter: `"integer"` (canonical positive decimal) or `"string"` (1-64 of `A-Z a-z 0-9 - . _ ~`).' }),
  upstream: nonEmptyString({ label: 'template', doc: 'Upstream path of one item over the same parameters, e.g. `"/v2/products/{sku}"`.' }),
  service: nonEmptyString({ default: 'upstream', doc: 'The upstream service: `upstream` or a key of `upstreams`.' }),
  record: string({ label: 'JSON pointer', default: '', doc: 'Where the record is in the upstream\'s answer (RFC 6901); `"/data"` unwraps `{"data": {...}}`.' }),
  fields: strings({ default: [], doc: 'Record fields copied into the representation, in this order; each must be present (else 502).' }),
  fieldTypes: map(string({ oneOf: FIELD_TYPES }), { default: {}, doc: 'Types some fields must have (`string`, `integer`, `number`, `boolean`, `object`, `array`; else 502).' }),
  exposeFields: strings({ default: [], doc: 'Further record fields copied when present (data exposure is opt-in).' }),
  links: links('Relation → path template; names resolve to path parameters, then to record fields. `self` is always added. Each must lead to a declared path (a resource\'s `path` or `collection.path`, or `/api`); a relation set to `null` is removed.'),
  rel: nonEmptyString({ nullable: true, default: null, doc: 'Relation of the item template in the API root\'s links; `null`: not linked from the root.' }),
  singular: nonEmptyString({ nullable: true, default: null, doc: 'The noun for one item in problems (`HG_ERR_<SINGULAR>_NOT_FOUND`) and schema names; `null`: `rel`, else the name.' }),
  collection: COLLECTION,
  scope: nonEmptyString({ nullable: true, default: null, doc: 'Scope a token needs to read it; `null`: `auth.requiredScope`.' }),
  owner: OWNER,
  maxAgeSeconds: integer({ min: 0, max: 31_536_000, nullable: true, unit: 's', default: null, doc: 'Overrides `cache.maxAgeSeconds` for this resource.' }),
  // Writes (README "Writes"): GET implies HEAD; POST acts on the collection, the others on an item.
  methods: strings({ nonEmpty: true, oneOf: WRITE_AND_READ_METHODS, default: ['GET'], doc: 'Methods it takes: `GET` (and so `HEAD`), `POST` (on the collection), `PUT`, `PATCH`, `DELETE` (on an item). Others: 405 with `Allow`. See [writes.md](writes.md).' }),
  writeScope: nonEmptyString({ nullable: true, default: null, doc: 'Scope a write needs; `null`: `<name>:write` (e.g. `customers:write`).' }),
  requireIfMatch: boolean({ default: false, doc: '`PUT`, `PATCH` and `DELETE` without `If-Match` get 428 before anything is sent.' }),
  idempotency: string({ oneOf: ['optional', 'required'], default: 'optional', doc: '`"required"`: a `POST` without `Idempotency-Key` is a 400.' }),
  vary: VARY,
  sharedAcrossIdentities: boolean({ default: false, doc: '`true`: the answer does not depend on the identity the service is sent (forwarded claims, token or headers), so all clients share one cache entry per path. Not allowed together with `vary`.' }),
  schema: path({ nullable: true, default: null, doc: 'A JSON Schema (draft 2020-12) file request bodies are validated against (relative to the config file); failures are 422s listing each field.' }),
});
