import { JsonPointer } from './json-pointer.ts';
import { compileSchemaFile } from './json-schema.ts';
import { sharedPath, type TypedTemplate } from './overlap.ts';
import { OWN_PATHS } from './own-paths.ts';
import type { ParamType } from './params.ts';
import { checkCollectionQuery, checkQuery, upstreamPath } from './query-checks.ts';
import { splitTemplate, fixedQueryNames } from './query-text.ts';
import { PathTemplate } from './template.ts';
import { fieldName, fieldNames, fieldPointer, type FieldEntry } from './fields.ts';
import { LinkTemplate } from './link-template.ts';
import { closest } from '../config/closest.ts';
import { servicesOf } from '../config/service-checks.ts';
import type { Config, ResourceConfig } from '../config/types.ts';

/** Names the formats and the collection rendering use themselves: no field may take them. */
export const RESERVED_FIELDS: ReadonlySet<string> = new Set(['links', '_links', '_embedded', 'items']);
/** The plain JSON member an item with embeds carries its embedded parts in. */
const EMBEDDED_MEMBER = 'embedded';
/** Relations the gateway sets itself. */
const RESERVED_RELS = new Set(['self']);
/** Links the API root has whatever is declared. */
export const ROOT_RELS = ['self', 'describedby'] as const;
const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
/** A header field name (RFC 9110 section 5.1: a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REL = /^[A-Za-z][A-Za-z0-9._-]*$/;

/** Parses a template, or records why it is not one under `key`; null then. */
function template(text: string, key: string, problems: string[]): PathTemplate | null {
  const problem = PathTemplate.problem(text);
  if (problem === null) return PathTemplate.parse(text);
  problems.push(`${key}: ${problem}, got ${JSON.stringify(text)}`);
  return null;
}

function pointer(text: string | null, key: string, problems: string[]): void {
  if (text === null) return;
  const problem = JsonPointer.problem(text);
  if (problem !== null) problems.push(`${key}: ${problem}, got ${JSON.stringify(text)}`);
}

/** Parses a link template, or records why it is not one under `key`; null then. */
function linkTemplate(text: string, key: string, problems: string[]): LinkTemplate | null {
  const problem = LinkTemplate.problem(text);
  if (problem === null) return LinkTemplate.parse(text);
  problems.push(`${key}: ${problem}, got ${JSON.stringify(text)}`);
  return null;
}

/**
 * One entry of `fields`, `exposeFields` or `linkFields`: a name the representation may carry, and
 * for a field taken from a pointer, a valid pointer into the record (not the whole record).
 */
function checkFieldEntry(entry: FieldEntry, key: string, index: number, at: string, problems: string[]): void {
  const name = fieldName(entry);
  const from = fieldPointer(entry);
  if (RESERVED_FIELDS.has(name)) problems.push(`${key}: "${name}" is always part of the representation or reserved`);
  else if (from === null && /[./]/.test(name))
    problems.push(
      `${key}: "${name}" has a "." or "/"; a field named by a string is a top-level member of the record, taken literally: for a nested value write {"name": "<public name>", "pointer": "/path/to/it"} (or point ${at}.record at the object that holds the fields)`,
    );
  else if (from !== null && !NAME.test(name))
    problems.push(`${key}: "${name}" is not a public field name (a letter, then letters, digits, - and _; dots in a link name read below a field)`);
  if (from === null) return;
  pointer(from, `${key}[${index}].pointer`, problems);
  if (from === '') problems.push(`${key}[${index}].pointer: "" is the whole record; point at a value inside it`);
}

/**
 * `readOnlyFields` names exposed fields, and a writable resource's field taken from a pointer is
 * read-only: a write's body is sent as it came, so a renamed field would reach the upstream under
 * its public name, not where the upstream keeps it.
 */
function checkReadOnly(r: ResourceConfig, at: string, listed: readonly string[], problems: string[]): void {
  for (const field of r.readOnlyFields) {
    if (listed.includes(field)) continue;
    const meant = closest(field, listed);
    problems.push(`${at}.readOnlyFields: "${field}" is not in ${at}.fields or ${at}.exposeFields${meant === undefined ? '' : `; did you mean "${meant}"?`}`);
  }
  for (const field of new Set(r.readOnlyFields.filter((f, i) => r.readOnlyFields.indexOf(f) !== i)))
    problems.push(`${at}.readOnlyFields: "${field}" is listed more than once`);
  const writes = r.methods.filter((m) => m === 'POST' || m === 'PUT' || m === 'PATCH');
  if (writes.length === 0) return;
  for (const key of ['fields', 'exposeFields'] as const) {
    for (const entry of r[key]) {
      const from = fieldPointer(entry);
      if (from === null || r.readOnlyFields.includes(fieldName(entry))) continue;
      problems.push(
        `${at}.${key}: "${fieldName(entry)}" is taken from the pointer ${JSON.stringify(from)}, and ${at}.methods writes (${writes.join(', ')}): a write's body goes to the upstream as sent, so it would name "${fieldName(entry)}" where the upstream keeps ${JSON.stringify(from)}; list it in ${at}.readOnlyFields`,
      );
    }
  }
}

/** Every parameter `t` names must be one of `known` (the parameters of `where`). */
function paramsWithin(t: PathTemplate | LinkTemplate | null, known: readonly string[], key: string, where: string, problems: string[]): void {
  for (const name of t?.params ?? []) {
    if (!known.includes(name)) problems.push(`${key}: {${name}} is not a parameter of ${where}`);
  }
}

/**
 * A public resource's reads are answered to anyone from one shared cache entry (one per value of the
 * headers it varies with), so nothing may make them depend on who asks: an owner rule in force (an
 * anonymous caller owns nothing, so its reads would all be refused), a service that is told the
 * caller's identity (an answer fetched with one caller's claims or token would be served to
 * everyone), or a vary on claims (an anonymous caller has none, and a token's are not read).
 */
function checkPublic(at: string, r: ResourceConfig, config: Config, problems: string[]): void {
  if (!r.methods.includes('GET')) problems.push(`${at}.public: lets only GET and HEAD through without credentials, and ${at}.methods has no "GET"`);
  const ownerClaim = r.owner === null ? null : (r.owner.claim ?? config.auth.ownerClaim);
  if (ownerClaim !== null)
    problems.push(
      `${at}.public: an anonymous caller owns nothing, so the owner rule (claim "${ownerClaim}") would refuse every public read; set ${at}.owner to null, or drop public`,
    );
  if ((r.vary?.claims.length ?? 0) > 0)
    problems.push(`${at}.public: an anonymous caller has no claims, so ${at}.vary.claims would keep nothing apart; vary by headers only, or drop public`);
  const service = servicesOf(config).get(r.service);
  if (service === undefined) return; // named by the service check
  const forwarded = [
    ...(Object.keys(service.forwardClaims).length > 0 ? ['forwardClaims'] : []),
    ...(service.forwardAuthorization ? ['forwardAuthorization'] : []),
  ];
  if (forwarded.length > 0) {
    const key = r.service === 'upstream' ? 'upstream' : `upstreams.${r.service}`;
    problems.push(
      `${at}.public: the service "${r.service}" is told who asks (${forwarded.map((f) => `${key}.${f}`).join(', ')}), so one caller's answer would be shared with anonymous callers; serve it from a service without them, or drop public`,
    );
  }
}

/** A template the table already holds, with what to call it in a problem. */
interface Claimed {
  readonly typed: TypedTemplate;
  readonly label: string;
}

/**
 * One path names one resource: a template that can match a path an earlier one matches (the API
 * root and its document included) is refused, naming both. Same shape: "collides"; otherwise the
 * path both match is shown. A refused template is not claimed, so each problem is said once.
 */
function claimPaths(t: PathTemplate | null, params: Readonly<Record<string, string>>, key: string, claimed: Claimed[], problems: string[]): void {
  if (t === null) return;
  // A parameter without a valid type was named already; as a "string" it overlaps the most.
  const typed: TypedTemplate = { template: t, types: t.params.map((p): ParamType => (params[p] === 'integer' ? 'integer' : 'string')) };
  let refused = false;
  for (const other of claimed) {
    const shared = sharedPath(typed, other.typed);
    if (shared === null) continue;
    refused = true;
    if (t.shape === other.typed.template.shape) problems.push(`${key}: ${t.text} collides with ${other.label} (the same paths would match both)`);
    else
      problems.push(
        `${key}: ${t.text} overlaps ${other.label}: both match ${shared}, so one path would name two resources; make a literal segment differ, or give the parameter a type the literal does not fit`,
      );
  }
  if (!refused) claimed.push({ typed, label: `${key} (${t.text})` });
}

function checkResource(name: string, r: ResourceConfig, config: Config, problems: string[], claimed: Claimed[]): void {
  const at = `resources.${name}`;
  if (!NAME.test(name)) problems.push(`${at}: a resource name starts with a letter and has only letters, digits, - and _`);
  const item = template(r.path, `${at}.path`, problems);
  const params = item?.params ?? [];
  if (item !== null && params.length === 0) problems.push(`${at}.path: an item path needs a parameter (its last one names the item)`);
  for (const param of params)
    if (r.params[param] === undefined) problems.push(`${at}.params.${param}: the path parameter {${param}} has no type ("integer" or "string")`);
  for (const param of Object.keys(r.params))
    if (item !== null && !params.includes(param)) problems.push(`${at}.params.${param}: not a parameter of ${at}.path`);
  const upstream = template(upstreamPath(r.upstream, `${at}.upstream`, problems), `${at}.upstream`, problems);
  checkQuery(r.query, `${at}.query`, false, fixedQueryNames(splitTemplate(r.upstream).query), problems);
  paramsWithin(upstream, params, `${at}.upstream`, `${at}.path`, problems);
  const itemParam = params[params.length - 1];
  // Without the item's own parameter every item would be read from one and the same upstream path
  // (said only when no unknown name is, which is the likelier slip: {skuu} for {sku}).
  if (upstream !== null && itemParam !== undefined && !upstream.params.includes(itemParam) && upstream.params.every((p) => params.includes(p)))
    problems.push(`${at}.upstream: must name the item's own parameter {${itemParam}} (else every item reads the same upstream path)`);
  const services = [...servicesOf(config).keys()];
  if (!services.includes(r.service)) {
    const hint = closest(r.service, services);
    problems.push(
      `${at}.service: "${r.service}" is not a declared service ("upstream" or a key of upstreams)${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`,
    );
  }
  pointer(r.record, `${at}.record`, problems);
  if (r.vary !== null && r.sharedAcrossIdentities)
    problems.push(
      `${at}.sharedAcrossIdentities: not allowed together with ${at}.vary (one says what the answer depends on, the other that it depends on nothing)`,
    );
  for (const header of r.vary?.headers ?? []) if (!HEADER_NAME.test(header)) problems.push(`${at}.vary.headers: "${header}" is not a header name`);
  const names = { fields: fieldNames(r.fields), exposeFields: fieldNames(r.exposeFields), linkFields: fieldNames(r.linkFields) };
  for (const key of ['fields', 'exposeFields', 'linkFields'] as const) {
    r[key].forEach((entry, i) => checkFieldEntry(entry, `${at}.${key}`, i, at, problems));
    const list = names[key];
    for (const field of new Set(list.filter((f, i) => list.indexOf(f) !== i))) problems.push(`${at}.${key}: "${field}" is listed more than once`);
  }
  for (const field of names.exposeFields) if (names.fields.includes(field)) problems.push(`${at}.exposeFields: "${field}" is already in ${at}.fields`);
  for (const field of names.linkFields) {
    const already = params.includes(field)
      ? 'path (a parameter)'
      : names.fields.includes(field)
        ? 'fields'
        : names.exposeFields.includes(field)
          ? 'exposeFields'
          : null;
    if (already !== null) problems.push(`${at}.linkFields: "${field}" is already in ${at}.${already}`);
  }
  // A type for a field not listed now waits for it to be exposed: the shipped orders type fields an
  // operator may leave out of exposeFields. A name that looks like a listed field's is a slip.
  const listed = [...names.fields, ...names.exposeFields];
  for (const field of Object.keys(r.fieldTypes)) {
    const meant = listed.includes(field) ? undefined : closest(field, listed);
    if (meant !== undefined) problems.push(`${at}.fieldTypes.${field}: not in ${at}.fields or ${at}.exposeFields; did you mean "${meant}"?`);
  }
  checkReadOnly(r, at, listed, problems);
  // A link's names are path parameters or record fields the declaration names: one named nowhere
  // (a typo, a field the upstream calls otherwise) would leave the link out of every answer unseen.
  // A dotted name (`brand.id`) reads below a declared field: its first part is what must be declared.
  const declared = new Set([...listed, ...names.linkFields]);
  const read = new Set<string>();
  for (const [rel, text] of Object.entries(r.links)) {
    if (RESERVED_RELS.has(rel)) problems.push(`${at}.links.${rel}: "self" is always added and names the requested path`);
    else if (!REL.test(rel)) problems.push(`${at}.links.${rel}: a relation name starts with a letter and has only letters, digits, ., - and _`);
    for (const name of linkTemplate(text, `${at}.links.${rel}`, problems)?.params ?? []) {
      const head = name.split('.')[0] as string;
      read.add(head);
      if (item === null) continue;
      if (params.includes(head)) {
        if (head !== name) problems.push(`${at}.links.${rel}: ${text} names {${name}}, but {${head}} is a path parameter, which has no members`);
      } else if (!declared.has(head))
        problems.push(
          `${at}.links.${rel}: ${text} names {${name}}, which is neither a parameter of ${at}.path nor a declared field${head === name ? '' : ` ("${head}")`}; list it in ${at}.linkFields (read for links only) or in exposeFields`,
        );
    }
  }
  // A dotted or slashed name is refused already, said once.
  for (const field of names.linkFields)
    if (!read.has(field) && !/[./]/.test(field)) problems.push(`${at}.linkFields: "${field}" is read by none of ${at}.links`);
  for (const key of ['rel', 'singular'] as const) {
    const value = r[key];
    if (value !== null && !NAME.test(value)) problems.push(`${at}.${key}: starts with a letter and has only letters, digits, - and _`);
  }
  for (const key of ['scope', 'writeScope'] as const) {
    const value = r[key];
    if (value !== null && /\s/.test(value)) problems.push(`${at}.${key}: expected a single scope without spaces`);
  }
  if (r.methods.includes('POST') && r.collection === null) problems.push(`${at}.methods: POST creates on the collection path; declare ${at}.collection`);
  if (r.schema !== null) {
    try {
      compileSchemaFile(r.schema);
    } catch (err) {
      problems.push(`${at}.schema: ${(err as Error).message}`);
    }
  }
  if (r.public) checkPublic(at, r, config, problems);
  if (r.owner !== null && item !== null && !params.includes(r.owner.param))
    problems.push(`${at}.owner.param: {${r.owner.param}} is not a parameter of ${at}.path`);
  claimPaths(item, r.params, `${at}.path`, claimed, problems);
  const c = r.collection;
  if (c === null) return;
  const collection = template(c.path, `${at}.collection.path`, problems);
  claimPaths(collection, r.params, `${at}.collection.path`, claimed, problems);
  const identity = params[params.length - 1];
  paramsWithin(
    collection,
    params.filter((p) => p !== identity),
    `${at}.collection.path`,
    `${at}.path (other than the item's own {${identity}})`,
    problems,
  );
  const collectionParams = collection?.params ?? [];
  paramsWithin(
    template(upstreamPath(c.upstream, `${at}.collection.upstream`, problems), `${at}.collection.upstream`, problems),
    collectionParams,
    `${at}.collection.upstream`,
    `${at}.collection.path`,
    problems,
  );
  pointer(c.items, `${at}.collection.items`, problems);
  checkCollectionQuery(c, `${at}.collection`, problems);
  for (const [rel, text] of Object.entries(c.links)) {
    if (RESERVED_RELS.has(rel) || (c.paged && ['first', 'prev', 'next', 'last'].includes(rel)))
      problems.push(`${at}.collection.links.${rel}: the gateway sets this relation itself`);
    paramsWithin(
      linkTemplate(text, `${at}.collection.links.${rel}`, problems),
      collectionParams,
      `${at}.collection.links.${rel}`,
      `${at}.collection.path`,
      problems,
    );
  }
}

/**
 * Every link a resource declares leads to a path the gateway answers: a relation whose template no
 * route matches would be rendered into every representation and answer 404 to whoever follows it
 * (a typo, or a linked resource removed with `null` while the link stayed).
 */
function checkLinkTargets(config: Config, problems: string[]): void {
  // Each path the gateway answers, with the query parameters it declares.
  const routes: { template: PathTemplate; query: readonly string[] }[] = OWN_PATHS.map((p) => ({ template: PathTemplate.parse(p), query: [] }));
  for (const r of Object.values(config.resources)) {
    for (const [text, query] of [
      [r.path, r.query],
      [r.collection?.path, r.collection?.query ?? {}],
    ] as const)
      if (text !== undefined && PathTemplate.problem(text) === null) routes.push({ template: PathTemplate.parse(text), query: Object.keys(query) });
  }
  for (const [name, r] of Object.entries(config.resources)) {
    const links: [string, string][] = Object.entries(r.links).map(([rel, text]) => [`resources.${name}.links.${rel}`, text]);
    for (const [rel, text] of Object.entries(r.collection?.links ?? {})) links.push([`resources.${name}.collection.links.${rel}`, text]);
    for (const [key, text] of links) {
      if (LinkTemplate.problem(text) !== null) continue; // already named as a bad template
      // A link's value comes from a record at run time: one that does not fit the target's type is left out then.
      const link = LinkTemplate.parse(text);
      const reached = routes.filter((route) => link.path.mayLeadTo(route.template));
      if (reached.length === 0)
        problems.push(
          `${key}: ${text} is not a path of this gateway (no resource's path or collection.path matches it), so following it would answer 404; declare that resource, or set the link to null to drop it`,
        );
      // An undeclared query parameter is a 400 on every collection: a link carrying one would lead nowhere.
      for (const variable of link.query)
        if (reached.length > 0 && !reached.some((route) => route.query.includes(variable)))
          problems.push(
            `${key}: ${text} carries {?${variable}}, but the path it leads to declares no query parameter "${variable}" (following it would be a 400); declare it in that resource's query, or drop it from the template`,
          );
    }
  }
}

/**
 * Only declared relations may be embedded, and each must lead where it says: a relation of the
 * declaration's links (the collection's for `collection.embed`), a declared target whose item path
 * (or collection path, for `kind: "collection"`) the link's template may lead to.
 */
function checkEmbeds(config: Config, problems: string[]): void {
  const names = Object.keys(config.resources).filter((n) => config.resources[n] != null);
  for (const [name, r] of Object.entries(config.resources)) {
    const declared: [string, Readonly<Record<string, string>>, ResourceConfig['embed']][] = [[`resources.${name}`, r.links, r.embed]];
    if (r.collection !== null) declared.push([`resources.${name}.collection`, r.collection.links, r.collection.embed]);
    // Plain JSON carries an item's embedded parts in the member `embedded`: a field of that name would be overwritten.
    const exposed = [...r.fields, ...r.exposeFields].map(fieldName);
    if (Object.keys(r.embed).length > 0 && exposed.includes(EMBEDDED_MEMBER))
      problems.push(
        `resources.${name}.embed: the resource exposes a field named "${EMBEDDED_MEMBER}", the member that holds its embedded parts in plain JSON; rename the field ({"name": "<another name>", "pointer": "/${EMBEDDED_MEMBER}"}) or declare no embeds`,
      );
    for (const [at, links, embeds] of declared) {
      for (const [rel, embed] of Object.entries(embeds)) {
        const key = `${at}.embed.${rel}`;
        const text = links[rel];
        if (rel === 'items') {
          problems.push(
            `${key}: "items" names a collection's members in an embed path (items.<rel>); declare the members' relations in resources.${name}.embed`,
          );
          continue;
        }
        if (text == null) {
          problems.push(`${key}: "${rel}" is not a relation of ${at}.links; only a declared link can be embedded`);
          continue;
        }
        const target = config.resources[embed.target];
        if (target == null) {
          const hint = closest(embed.target, names);
          problems.push(`${key}.target: "${embed.target}" is not a declared resource${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`);
          continue;
        }
        const path = embed.kind === 'collection' ? target.collection?.path : target.path;
        if (path === undefined) {
          problems.push(`${key}.kind: "collection", but resources.${embed.target} declares no collection`);
          continue;
        }
        if (embed.batch !== null) {
          if (embed.kind !== 'item') problems.push(`${key}.batch: only an item relation reads its parts through a batch endpoint`);
          else if (!embed.batch.upstream.includes('{ids}'))
            problems.push(`${key}.batch.upstream: has no {ids} for the identifiers, got ${JSON.stringify(embed.batch.upstream)}`);
          else if (PathTemplate.problem(target.path) === null && PathTemplate.parse(target.path).params.length !== 1)
            problems.push(`${key}.batch: resources.${embed.target}'s path has more than one parameter, and a batch endpoint is asked by identifier alone`);
          pointer(embed.batch.items, `${key}.batch.items`, problems);
        }
        if (PathTemplate.problem(text) !== null || PathTemplate.problem(path) !== null) continue; // named as bad templates already
        if (!PathTemplate.parse(text).mayLeadTo(PathTemplate.parse(path)))
          problems.push(
            `${key}: the link ${text} cannot lead to ${path} (resources.${embed.target}'s ${embed.kind === 'collection' ? 'collection.path' : 'path'})`,
          );
      }
    }
  }
}

/**
 * The rules a resource table must keep beyond each key's own type (docs/resources.md):
 * templates that parse and name only known parameters, typed parameters, declared services, JSON
 * pointers, no two templates (items, collections, the API root and its document) that can match
 * one path, API root relations used once, links that lead to a declared path.
 */
export function checkResources(config: Config, problems: string[]): void {
  const claimed: Claimed[] = OWN_PATHS.map((p) => ({ typed: { template: PathTemplate.parse(p), types: [] }, label: `the gateway's own ${p}` }));
  const rootRels = new Map<string, string>(ROOT_RELS.map((r) => [r, 'the API root itself']));
  for (const [name, resource] of Object.entries(config.resources)) {
    checkResource(name, resource, config, problems, claimed);
    const linked: [string, string][] = [];
    if (resource.rel !== null) linked.push([resource.rel, `resources.${name}.rel`]);
    if (
      resource.collection !== null &&
      PathTemplate.problem(resource.collection.path) === null &&
      PathTemplate.parse(resource.collection.path).params.length === 0
    ) {
      linked.push([name, `resources.${name} (its collection is linked from the API root under the resource's name)`]);
    }
    for (const [rel, key] of linked) {
      const other = rootRels.get(rel);
      if (other !== undefined) problems.push(`${key}: the API root relation "${rel}" is already used by ${other}`);
      else rootRels.set(rel, key);
    }
  }
  checkLinkTargets(config, problems);
  checkEmbeds(config, problems);
}
