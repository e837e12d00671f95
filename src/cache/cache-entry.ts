import { FORMATS, JSON_INDEX, renderBody, resourceFromJson } from '../hypermedia/formats.ts';
import { derivedEtag, upstreamEtagOf } from '../protocol/etag.ts';
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

/** The groups of an entry that belongs to none (most items): one array for all of them. */
const NO_GROUPS: readonly string[] = Object.freeze([]);

/** When a cached absence was stored and until when it holds (an absence has no representation to say so). */
interface AbsenceTimes {
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
}

/**
 * What the cache keeps for one resource path: its representation in each format a client has
 * asked for (JSON always; the others rendered from it on first use, so a format never asked for
 * costs nothing), or, for a cached 404, none at all. `groups` are the invalidation groups the
 * path belongs to (its collection, the items it lies below): a write or purge drops a group at once.
 *
 * Laid out for a cache of 100,000 of them (bench:memory): most hold JSON alone, so that one is a
 * field and the other formats an array made on first use; times and staleness are read from the
 * JSON representation (its shared form); the upstream's validator is not kept beside our JSON
 * ETag, which is derived from it and gives it back (etag.ts). ~150 bytes an entry less than an
 * array of formats, a validator object and times of its own.
 */
export class CacheEntry {
  /** The JSON representation; null for a cached absence (the upstream's 404). */
  readonly #json: Representation | null;
  /** Every format by index in FORMATS once one besides JSON is rendered; null until then. */
  readonly #formats: readonly (Representation | undefined)[] | null;
  /** The render suffixes when the upstream's validator is our JSON ETag's (the usual case), the validator when not, or null. */
  readonly #validator: readonly string[] | Validator | null;
  /** A cached absence's times; null when there is a JSON representation to read them from. */
  readonly #absence: AbsenceTimes | null;
  readonly groups: readonly string[];
  /** The relation of embedded items (HAL needs it; plain JSON does not carry it); null for an item. */
  readonly embeddedRel: string | null;
  /** Bytes its bodies hold in memory (Representation.heldBytes), for cache.maxBytes. */
  readonly byteLength: number;

  constructor(
    variants: readonly (Representation | undefined)[],
    freshness: { storedAtMs: number; expiresAtMs: number; staleAllowed: boolean },
    groups: readonly string[],
    embeddedRel: string | null,
    validator: Validator | null = null,
  ) {
    const json = variants[JSON_INDEX] ?? null;
    this.#json = json;
    this.#formats = variants.some((variant, i) => i !== JSON_INDEX && variant !== undefined) ? variants : null;
    this.#absence = json === null ? { storedAtMs: freshness.storedAtMs, expiresAtMs: freshness.expiresAtMs } : null;
    const suffixes = validator?.suffixes;
    this.#validator =
      validator === null || suffixes === undefined
        ? null
        : json !== null && upstreamEtagOf(json.etag, suffixes[JSON_INDEX] ?? '') === validator.upstream
          ? suffixes
          : validator;
    this.groups = groups.length === 0 ? NO_GROUPS : groups;
    this.embeddedRel = embeddedRel;
    let bytes = 0;
    for (const variant of variants) bytes += variant === undefined ? 0 : variant.heldBytes;
    this.byteLength = bytes;
  }

  /** The representation in format `index` (FORMATS), if rendered; never one for a cached absence. */
  variant(index: number): Representation | undefined {
    if (index === JSON_INDEX) return this.#json ?? undefined;
    return this.#formats?.[index];
  }

  /** How many formats it holds rendered. */
  get formatCount(): number {
    if (this.#formats === null) return this.#json === null ? 0 : 1;
    let n = 0;
    for (const variant of this.#formats) if (variant !== undefined) n++;
    return n;
  }

  /** When the version it holds was current at the origin, in ms. */
  get storedAtMs(): number {
    return this.#json === null ? (this.#absence as AbsenceTimes).storedAtMs : this.#json.storedAtMs;
  }

  /** End of freshness, in ms. */
  get expiresAtMs(): number {
    return this.#json === null ? (this.#absence as AbsenceTimes).expiresAtMs : this.#json.expiresAtMs;
  }

  /** May it answer once expired? Never for a cached absence. */
  get staleAllowed(): boolean {
    return this.#json !== null && this.#json.staleAllowed;
  }

  /** The upstream's validator of this version, or null (then ETags are digests of the bodies). */
  get validator(): Validator | null {
    const held = this.#validator;
    if (held === null || !isSuffixes(held)) return held;
    const json = this.#json as Representation;
    return { upstream: upstreamEtagOf(json.etag, held[JSON_INDEX] ?? '') as string, suffixes: held };
  }

  /** A cached absence: the upstream said there is no such resource. */
  get absent(): boolean {
    return this.#json === null;
  }

  /**
   * This entry with the representation in format `index` rendered from its JSON (same freshness,
   * same groups), or null when it is an absence. The caller stores the new entry, so the cache
   * counts the new bytes.
   */
  withFormat(index: number, make: (body: string, contentType: string, like: Representation, etag: string | undefined) => Representation): CacheEntry | null {
    const json = this.#json;
    if (json === null) return null;
    const format = FORMATS[index];
    if (format === undefined) throw new RangeError(`no format ${index}`);
    const validator = this.validator;
    const variants = FORMATS.map((_, i) => this.variant(i));
    variants[index] = make(renderBody(resourceFromJson(JSON.parse(json.body), this.embeddedRel), format), format.contentType, json, etagFor(validator, index));
    return new CacheEntry(variants, this, this.groups, this.embeddedRel, validator);
  }
}

function isSuffixes(held: readonly string[] | Validator): held is readonly string[] {
  return Array.isArray(held);
}
