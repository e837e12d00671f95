import { CacheEntry, etagFor, type Validator } from '../cache/cache-entry.ts';
import { isFieldValue } from '../lib/field-value.ts';
import { Representation } from '../cache/representation.ts';
import { FORMATS, JSON_INDEX } from '../hypermedia/formats.ts';
import { isEntityTag } from '../protocol/etag.ts';
import { rejection, type Rejection, type SharedRecord } from './entry-codec.ts';

/** What a source's entries look like, so one read from the tier can be checked before it is adopted. */
export interface SharedShape {
  /** The fingerprint of the declaration its renderings come from (CompiledResource.fingerprint). */
  readonly fingerprint: string;
  /** The longest lifetime an entry may have: the resource's max age, s. */
  readonly maxAgeSeconds: number;
  /** The relation of embedded items: a collection's name, null for an item. */
  readonly embeddedRel: string | null;
  /** The render suffix per format, to derive ETags from the upstream's validator (etag.ts); null when its entries carry none. */
  readonly suffixes: readonly string[] | null;
  /** The Vary of its answers (the gateway's, and the request headers the resource varies with). */
  readonly vary: string;
  /** The upstream headers its service passes to the client (exposeHeaders, as configured): no other may come from the tier. */
  readonly exposeHeaders: readonly string[];
}

/** What this instance expects of the entry at one path. */
export interface Expected {
  /** The cache key: the path, and for a resource that varies, `#` and its identity (src/resources/identity.ts). */
  readonly path: string;
  readonly shape: SharedShape;
  /** The invalidation groups the source files this path under. */
  readonly groups: readonly string[];
  /** cache.notFoundSeconds in ms: the longest a shared absence may hold. */
  readonly absenceMs: number;
}

const JSON_TYPE = (FORMATS[JSON_INDEX] as (typeof FORMATS)[number]).contentType;
/** The only Cache-Control the gateway stores (freshness.ts): anything else did not come from a gateway. */
const MAX_AGE = /^max-age=(\d{1,10})$/;
/** Lifetimes are whole seconds; age and time left are ms that may each have been rounded. */
const ROUNDING_MS = 1;

/**
 * Stored exposed headers as this instance would have kept them: each name one its service exposes
 * (spelt as configured), at most once, each value a valid field value; or why not.
 */
function exposedProblem(stored: readonly string[], allowed: readonly string[]): Rejection | null {
  const seen = new Set<string>();
  for (let i = 0; i < stored.length; i += 2) {
    const name = stored[i] as string;
    if (!allowed.includes(name) || seen.has(name)) return rejection('header', `it carries a header "${name}" the service does not expose here`);
    seen.add(name);
    if (!isFieldValue(stored[i + 1] as string)) return rejection('header', `its ${name} header is not a field value`);
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `links` as the gateway renders them: each a path, or a URI template {href, templated: true}. */
function isLinks(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  for (const link of Object.values(value)) {
    if (typeof link !== 'string' && !(isObject(link) && typeof link['href'] === 'string' && link['templated'] === true)) return false;
  }
  return true;
}

/** A plain-JSON rendering another format can be rendered from (formats.ts resourceFromJson), or why not. */
function bodyProblem(body: string, path: string, embeddedRel: string | null): Rejection | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return rejection('body', 'the body is not JSON');
  }
  if (!isObject(value) || !isLinks(value['links'])) return rejection('body', 'the body is not a rendered resource with links');
  if (embeddedRel !== null) {
    const items = value['items'];
    if (!Array.isArray(items) || !items.every((item) => isObject(item) && isLinks(item['links']))) return rejection('body', 'the body has no items with links');
  }
  // The body names itself: another record's body under this path is not this path's.
  if (value['links']['self'] !== path) return rejection('identity', 'the body is the rendering of another path');
  return null;
}

/**
 * The entry a record from the tier stands for at this instance's `nowMs`, checked against what this
 * instance expects: null when it is no longer fresh, else the entry or why it is not adopted.
 * Anyone who can write to Redis can write there, and another instance may run another declaration
 * or another version: nothing is served that this instance would not have stored itself. The path
 * it was written for and its body's self link are the path read; the declaration fingerprint,
 * embedded relation and invalidation groups are this instance's for it; the lifetime is no longer
 * than the resource's max age (an absence's no longer than cache.notFoundSeconds); Cache-Control
 * has the one form the gateway writes, and the ETag is derived here (from the upstream's validator,
 * itself a valid entity-tag, or from the body); exposed headers are ones the service exposes here,
 * each a valid field value, so no stored text reaches a header unchecked.
 *
 * An absence (the upstream's 404) is checked like a body, by what it carries: the path it was
 * written for, the declaration and a lifetime within cache.notFoundSeconds. Not adopting absences
 * at all would cost every instance its own upstream request per unknown id (what the tier is for,
 * against scans of unknown ids); and a writer able to forge a well-formed absence could forge a
 * well-formed body as well. The tier is as trustworthy as who may write to Redis (docs/caching.md
 * "What an instance adopts from the shared tier").
 */
export function adoptable(record: SharedRecord, expected: Expected, readAtMs: number, nowMs: number): CacheEntry | Rejection | null {
  const { meta, body } = record;
  const { path, shape } = expected;
  if (meta.p !== path) return rejection('identity', 'it was written for another path');
  if (meta.d !== shape.fingerprint) return rejection('declaration', 'it was rendered under another declaration of the resource');
  if (meta.r !== (meta.x === 1 ? null : shape.embeddedRel) || !sameList(meta.g, expected.groups))
    return rejection('identity', 'its invalidation groups or embedded relation are not those of this path');
  if (!Number.isFinite(meta.a) || !Number.isFinite(meta.t) || meta.a < 0) return rejection('freshness', 'its age or time left is not a number of ms');
  let lifetimeMs: number;
  if (meta.x === 1) {
    if (body !== '' || meta.c !== undefined || meta.u !== undefined || meta.h !== undefined) return rejection('format', 'an absence with a body or headers');
    lifetimeMs = expected.absenceMs;
  } else {
    const maxAge = MAX_AGE.exec(meta.c ?? '');
    if (maxAge === null) return rejection('header', 'its Cache-Control is not one the gateway writes');
    if (Number(maxAge[1]) > shape.maxAgeSeconds) return rejection('freshness', `its max-age is above the resource's ${shape.maxAgeSeconds} s`);
    lifetimeMs = Number(maxAge[1]) * 1000;
  }
  if (meta.a + meta.t > lifetimeMs + ROUNDING_MS) return rejection('freshness', 'its age and time left exceed its lifetime');
  // Its age and freshness go on from when it was written, by Redis's clock, placed on this instance's clock.
  const elapsed = Math.max(0, readAtMs - record.writtenAtMs);
  const left = meta.t - elapsed;
  if (left <= 0) return null;
  const freshness = { storedAtMs: nowMs - (meta.a + elapsed), expiresAtMs: nowMs + left, staleAllowed: meta.s === 1 };
  if (meta.x === 1) return new CacheEntry([], { ...freshness, staleAllowed: false }, expected.groups, null);
  let validator: Validator | null = null;
  if (meta.u !== undefined) {
    if (!isEntityTag(meta.u)) return rejection('header', 'its upstream validator is not an entity-tag');
    if (shape.suffixes === null) return rejection('identity', 'it carries a validator where this resource keeps none');
    validator = { upstream: meta.u, suffixes: shape.suffixes };
  }
  if (meta.h !== undefined) {
    const problem = exposedProblem(meta.h, shape.exposeHeaders);
    if (problem !== null) return problem;
  }
  // The body names its path; the key's identity part is checked above (meta.p), never in the body.
  const at = path.indexOf('#');
  const problem = bodyProblem(body, at === -1 ? path : path.slice(0, at), shape.embeddedRel);
  if (problem !== null) return problem;
  const rep = new Representation(
    body,
    JSON_TYPE,
    meta.c as string,
    freshness.storedAtMs,
    freshness.expiresAtMs,
    shape.vary,
    freshness.staleAllowed,
    etagFor(validator, JSON_INDEX),
    meta.h ?? null,
  );
  return new CacheEntry([rep], freshness, expected.groups, shape.embeddedRel, validator);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
