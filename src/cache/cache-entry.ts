import { FORMATS, JSON_INDEX, renderBody, resourceFromJson } from '../hypermedia/formats.ts';
import { derivedEtag } from './etag.ts';
import type { Representation } from './representation.ts';

/**
 * The upstream's validator of the version an entry holds, and the resource's render suffix per
 * format: every format's ETag derives from them (etag.ts), so If-Match can reach the upstream.
 */
export interface Validator {
  readonly upstream: string;
  readonly suffixes: readonly string[];
}

/** The ETag of format `index` of a version: derived from the upstream's validator, or undefined (a digest of the body then). */
export function etagFor(validator: Validator | null, index: number): string | undefined {
  const suffix = validator?.suffixes[index];
  return validator === null || suffix === undefined ? undefined : derivedEtag(validator.upstream, suffix);
}

/**
 * What the cache keeps for one resource path: its representation in each format a client has
 * asked for (JSON always; the others rendered from it on first use, so a format never asked for
 * costs nothing), or, for a cached 404, none at all. `groups` are the invalidation groups the
 * path belongs to (its collection, the items it lies below): a write or purge drops a group at once.
 */
/** The groups of an entry that belongs to none (most items): one array for all of them. */
const NO_GROUPS: readonly string[] = Object.freeze([]);

export class CacheEntry {
  /** Rendered bodies by index in FORMATS; empty for a cached absence (the upstream's 404). */
  readonly variants: readonly (Representation | undefined)[];
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
  readonly staleAllowed: boolean;
  readonly groups: readonly string[];
  /** The relation of embedded items (HAL needs it; plain JSON does not carry it); null for an item. */
  readonly embeddedRel: string | null;
  /** Bytes its bodies hold in memory (Representation.heldBytes), for cache.maxBytes. */
  readonly byteLength: number;
  /** The upstream's validator of this version, or null (then ETags are digests of the bodies). */
  readonly validator: Validator | null;

  constructor(variants: readonly (Representation | undefined)[], freshness: { storedAtMs: number; expiresAtMs: number; staleAllowed: boolean }, groups: readonly string[], embeddedRel: string | null, validator: Validator | null = null) {
    this.validator = validator;
    this.variants = variants;
    this.storedAtMs = freshness.storedAtMs;
    this.expiresAtMs = freshness.expiresAtMs;
    this.staleAllowed = freshness.staleAllowed;
    this.groups = groups.length === 0 ? NO_GROUPS : groups;
    this.embeddedRel = embeddedRel;
    let bytes = 0;
    for (const variant of variants) bytes += variant === undefined ? 0 : variant.heldBytes;
    this.byteLength = bytes;
  }

  /** A cached absence: the upstream said there is no such resource. */
  get absent(): boolean {
    return this.variants.length === 0;
  }

  /**
   * This entry with the representation in format `index` rendered from its JSON (same freshness,
   * same groups), or null when it is an absence. The caller stores the new entry, so the cache
   * counts the new bytes.
   */
  withFormat(index: number, make: (body: string, contentType: string, like: Representation, etag: string | undefined) => Representation): CacheEntry | null {
    const json = this.variants[JSON_INDEX];
    if (json === undefined) return null;
    const format = FORMATS[index];
    if (format === undefined) throw new RangeError(`no format ${index}`);
    const variants = FORMATS.map((_, i) => this.variants[i]);
    variants[index] = make(renderBody(resourceFromJson(JSON.parse(json.body), this.embeddedRel), format), format.contentType, json, etagFor(this.validator, index));
    return new CacheEntry(variants, this, this.groups, this.embeddedRel, this.validator);
  }
}
