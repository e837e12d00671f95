import { FORMATS, JSON_INDEX, renderBody, resourceFromJson } from '../hypermedia/formats.ts';
import type { Representation } from './representation.ts';

/**
 * What the cache keeps for one resource path: its representation in each format a client has
 * asked for (JSON always; the others rendered from it on first use, so a format never asked for
 * costs nothing), or, for a cached 404, none at all. `groups` are the invalidation groups the
 * path belongs to (its collection, the items it lies below): a write or purge drops a group at once.
 */
export class CacheEntry {
  /** Rendered bodies by index in FORMATS; empty for a cached absence (the upstream's 404). */
  readonly variants: readonly (Representation | undefined)[];
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
  readonly staleAllowed: boolean;
  readonly groups: readonly string[];
  /** The relation of embedded items (HAL needs it; plain JSON does not carry it); null for an item. */
  readonly embeddedRel: string | null;
  /** Body bytes held, for cache.maxBytes. */
  readonly byteLength: number;

  constructor(variants: readonly (Representation | undefined)[], freshness: { storedAtMs: number; expiresAtMs: number; staleAllowed: boolean }, groups: readonly string[], embeddedRel: string | null) {
    this.variants = variants;
    this.storedAtMs = freshness.storedAtMs;
    this.expiresAtMs = freshness.expiresAtMs;
    this.staleAllowed = freshness.staleAllowed;
    this.groups = groups;
    this.embeddedRel = embeddedRel;
    let bytes = 0;
    for (const variant of variants) bytes += variant === undefined ? 0 : variant.byteLength;
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
  withFormat(index: number, make: (body: string, contentType: string, like: Representation) => Representation): CacheEntry | null {
    const json = this.variants[JSON_INDEX];
    if (json === undefined) return null;
    const format = FORMATS[index];
    if (format === undefined) throw new RangeError(`no format ${index}`);
    const variants = FORMATS.map((_, i) => this.variants[i]);
    variants[index] = make(renderBody(resourceFromJson(JSON.parse(json.body), this.embeddedRel), format), format.contentType, json);
    return new CacheEntry(variants, this, this.groups, this.embeddedRel);
  }
}
