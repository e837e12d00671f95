import type { FieldTypeName } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import { deeperThan, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import type { Link, Resource } from '../hypermedia/resource.ts';
import type { CompiledCollection, CompiledLink, CompiledResource, LinkSource, LinkTarget } from './compile.ts';
import { dottedValue, fieldValue } from './fields.ts';
import type { JsonPointer } from './json-pointer.ts';
import { formValue } from './link-template.ts';
import type { ResponseHeaders } from '../lib/exchange.ts';
import type { PageAsk, UpstreamSpot } from './page-asks.ts';
import { paramFromValue, parseStringParam, type ParamType, type ParamValue } from './params.ts';

/**
 * The upstream answered, but not with what the declaration says: 502, and the detail says what was
 * wrong; `reason`, for the log only, says more where the detail must stay general.
 */
function invalid(r: CompiledResource, what: string, detail: string, reason?: string): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', {
    detail: `${r.service.who} sent an invalid ${r.singular} ${what}: ${detail}.`,
    log: reason === undefined ? { service: r.service.name } : { service: r.service.name, reason },
  });
}

function asObject(r: CompiledResource, value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(r, what, 'not a JSON object');
  return value as Record<string, unknown>;
}

/** `pointer` matched nothing in the answer: a declaration that does not fit the upstream, named in the log. */
function unmatched(pointer: string, key: string): string {
  return `the ${key.endsWith('.record') ? 'record' : 'items'} pointer "${pointer}" (${key}) matches nothing in the upstream's answer`;
}

function hasType(value: unknown, type: FieldTypeName): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
  }
}

/**
 * A field's value, when the gateway can render it: one nested deeper than MAX_JSON_DEPTH would
 * overflow the stack while it is rendered (a 500, and the upstream's answer counted ok); refused
 * here, inside the upstream attempt, it is a 502 counted as the bad body it is.
 */
function renderable(r: CompiledResource, field: string, value: unknown): unknown {
  if (deeperThan(value, MAX_JSON_DEPTH)) throw invalid(r, 'record', `${field} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** Where fields taken from pointers are in a record (CompiledResource.pointers). */
type Pointers = ReadonlyMap<string, JsonPointer> | null;

/** A record field as a link value: an integer, or a string of the characters a "string" parameter allows. */
function linkValue(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
  return typeof value === 'string' ? parseStringParam(value) : null;
}

/** A value a link reads: a path value, or the record's value of a field (a dotted name reads below it). */
function sourceValue(source: LinkSource, values: readonly ParamValue[], record: Readonly<Record<string, unknown>>, pointers: Pointers): unknown {
  return 'param' in source ? values[source.param] : dottedValue(record, source.parts, pointers);
}

/**
 * The link's query (RFC 6570 form-style, `?brand=acme&size=m`), '' when every variable is undefined;
 * null when a value does not fit the query parameter of that name the target declares (the link is
 * then left out, as for a path value: following it would be a 400).
 */
function linkQuery(
  link: CompiledLink,
  target: LinkTarget | undefined,
  values: readonly ParamValue[],
  record: Readonly<Record<string, unknown>>,
  pointers: Pointers,
): string | null {
  let out = '';
  for (const { name, source } of link.query) {
    let text = formValue(sourceValue(source, values, record, pointers));
    if (text === undefined) continue;
    const declared = target?.query?.param(name);
    if (declared !== undefined) {
      try {
        text = declared.read(text);
      } catch {
        return null;
      }
    }
    out += `${out === '' ? '?' : '&'}${name}=${text}`;
  }
  return out;
}

/**
 * The link's path, or null when a value it needs is missing or unfit (the link is then left out):
 * unfit for a path segment, or for the type of the parameter it fills in the declared path the
 * link leads to (an integer id takes neither "abc" nor 0), or for a query parameter that path declares.
 */
function buildLink(link: CompiledLink, values: readonly ParamValue[], record: Readonly<Record<string, unknown>>, pointers: Pointers): string | null {
  const parts: ParamValue[] = [];
  for (const source of link.sources) {
    const value = 'param' in source ? (values[source.param] as ParamValue) : linkValue(dottedValue(record, source.parts, pointers));
    if (value === null) return null;
    parts.push(value);
  }
  const href = link.template.path.build(parts);
  const target = link.targets.find((t) => t.template.fits(href, t.types));
  if (link.targets.length > 0 && target === undefined) return null;
  if (link.query.length === 0) return href;
  const query = linkQuery(link, target, values, record, pointers);
  return query === null ? null : href + query;
}

function linksOf(
  self: string,
  links: readonly CompiledLink[],
  values: readonly ParamValue[],
  record: Readonly<Record<string, unknown>>,
  pointers: Pointers,
): Record<string, Link> {
  const out: Record<string, Link> = { self };
  for (const link of links) {
    const href = buildLink(link, values, record, pointers);
    if (href !== null) out[link.rel] = href;
  }
  return out;
}

/**
 * An upstream record as the item resource at `self`: the declared fields in order (each present,
 * else 502; the identity field rendered as the parsed path value), the exposed fields it has, and
 * its links. Nothing else the upstream sends passes (data exposure is opt-in).
 */
export function itemFromRecord(r: CompiledResource, value: unknown, values: readonly ParamValue[], self: string): Resource {
  // JSON has no undefined: the record pointer found nothing (the client's detail stays the same).
  if (value === undefined) throw invalid(r, 'record', 'not a JSON object', unmatched(r.record.text, `resources.${r.name}.record`));
  const record = asObject(r, value, 'record');
  const id = values[values.length - 1] as ParamValue;
  const pointers = r.pointers;
  const upstreamId = fieldValue(record, r.identityField, pointers);
  if (upstreamId === undefined) throw invalid(r, 'record', `${r.identityField} is missing`);
  if (paramFromValue(r.types[r.types.length - 1] as ParamType, upstreamId) !== id)
    throw invalid(r, 'record', `${r.identityField} does not match the requested ${r.singular}`);
  const fields: Record<string, unknown> = {};
  for (const field of r.fields) {
    if (field === r.identityField) {
      fields[field] = id;
      continue;
    }
    const type = r.fieldTypes[field];
    const value = fieldValue(record, field, pointers);
    if (value === undefined || (type !== undefined && !hasType(value, type)))
      throw invalid(
        r,
        'record',
        `${field} is missing${type === undefined ? '' : ` or not a${type === 'integer' || type === 'object' || type === 'array' ? 'n' : ''} ${type}`}`,
      );
    fields[field] = renderable(r, field, value);
  }
  for (const field of r.exposeFields) {
    const value = fieldValue(record, field, pointers);
    if (value === undefined) continue;
    const type = r.fieldTypes[field];
    if (type !== undefined && !hasType(value, type))
      throw invalid(r, 'record', `${field} is not a${type === 'integer' || type === 'object' || type === 'array' ? 'n' : ''} ${type}`);
    fields[field] = renderable(r, field, value);
  }
  return { fields, links: linksOf(self, r.links, values, record, pointers) };
}

/** One member of a collection page: its own path and values (to cache it as the item), and its resource. */
export interface Member {
  readonly path: string;
  readonly values: readonly ParamValue[];
  readonly resource: Resource;
}

/** A record of the collection as the item it is: its values (collection's, then the record's own), path and resource. */
export function memberFromRecord(r: CompiledResource, c: CompiledCollection, value: unknown, collectionValues: readonly ParamValue[]): Member {
  const record = asObject(r, value, 'record');
  const params = r.item.params;
  const values = params.map((name, i) => {
    const source = c.itemParamSources[i] as number;
    if (source !== -1) return collectionValues[source] as ParamValue;
    const type = r.types[i] as ParamType;
    const v = paramFromValue(type, fieldValue(record, name, r.pointers));
    if (v === null) throw invalid(r, 'record', `${name} is not ${type === 'integer' ? 'a positive integer' : 'a valid string identifier'}`);
    return v;
  });
  const path = r.item.build(values);
  return { path, values, resource: itemFromRecord(r, record, values, path) };
}

/** The collection's total count, from the body or a header, when it declares one: a non-negative integer, else 502. */
function totalOf(r: CompiledResource, c: CompiledCollection, body: unknown, headers: ResponseHeaders): number | null {
  const source = c.total;
  if (source === null) return null;
  if (source.header !== undefined) {
    const text = headers[source.header];
    const value = typeof text === 'string' && /^(0|[1-9][0-9]{0,15})$/.test(text) ? Number(text) : -1;
    if (!Number.isSafeInteger(value) || value < 0) throw invalid(r, 'collection', `its ${source.header} header is not a non-negative integer`);
    return value;
  }
  const value = source.pointer.resolve(body);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalid(r, 'collection', `${source.pointer.text.slice(1) || 'the body'} is not a non-negative integer`);
  return value;
}

/**
 * An upstream collection answer as the collection resource: its members (each rendered as the item,
 * with its own self link), the total when declared, paging links (the page's `ask`; a collection
 * answered whole without one links only itself) and the declared links.
 */
export function pageFromBody(
  r: CompiledResource,
  c: CompiledCollection,
  body: unknown,
  headers: ResponseHeaders,
  collectionValues: readonly ParamValue[],
  ask: PageAsk | null,
  upstream: UpstreamSpot,
): { page: Resource; members: Member[] } {
  const base = c.path.build(collectionValues);
  const records = c.items.resolve(body);
  const limit = ask === null ? null : ask.limit;
  if (!Array.isArray(records) || (limit !== null && records.length > limit)) {
    const reason = records === undefined ? unmatched(c.items.text, `resources.${r.name}.collection.items`) : undefined;
    throw invalid(r, 'collection', `${c.items.text.slice(1) || 'the body'} is not an array${limit === null ? '' : ' of at most limit records'}`, reason);
  }
  const total = totalOf(r, c, body, headers);
  const members = records.map((record) => memberFromRecord(r, c, record, collectionValues));
  const links: Record<string, Link> = ask === null ? { self: base } : ask.links(base, { body, headers, records, total }, upstream);
  for (const link of c.links) {
    const href = buildLink(link, collectionValues, {}, null);
    if (href !== null) links[link.rel] = href;
  }
  const fields = total === null ? {} : { total };
  return { page: { fields, links, embedded: { rel: r.name, items: members.map((m) => m.resource) } }, members };
}
