import { CacheEntry, etagFor, type Validator } from '../cache/cache-entry.ts';
import { isStorable, localFreshness, upstreamFreshness, type Freshness } from '../cache/freshness.ts';
import { Representation } from '../cache/representation.ts';
import type { GatewayContext } from './context.ts';
import type { HgError } from '../lib/errors.ts';
import { renderSuffix } from '../protocol/etag.ts';
import { FORMATS, JSON_INDEX, renderBody } from '../hypermedia/formats.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { UpstreamFreshness } from '../upstream/cache-control.ts';
import type { CompiledVary } from './identity.ts';

/** How a resource becomes a cache entry: its freshness, invalidation groups, embedded relation and validator. */
export interface EntryOptions {
  readonly freshness: Freshness;
  readonly groups: readonly string[];
  readonly embeddedRel: string | null;
  readonly validator?: Validator | null;
  /** Its Vary when not the gateway's (a resource that varies with request headers: varyOf). */
  readonly vary?: string;
  /** The upstream's headers its 200s pass to the client (UpstreamResult.exposed); none when absent or null. */
  readonly exposed?: readonly string[] | null;
}

/** What a cached absence answers: the source's 404. */
interface Absence {
  notFound(): HgError;
}

/** A format rendered from an entry's JSON, with the JSON's freshness and Vary (CacheEntry.withFormat). */
function likeJson(body: string, contentType: string, like: Representation, etag: string | undefined): Representation {
  return new Representation(body, contentType, like.cacheControl, like.storedAtMs, like.expiresAtMs, like.vary, like.staleAllowed, etag, like.exposed);
}

/**
 * Resources as cache entries: rendered (JSON first, other formats when first asked for), dated by
 * their freshness, and stored unless an invalidation overtook the load that brought them; and the
 * upstream's "no such resource" as a cached absence.
 */
export class EntryStore {
  readonly #ctx: GatewayContext;
  /** Every resource answer is negotiated on Accept; with CORS on it also depends on Origin. */
  readonly vary: string;

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
    this.vary = ctx.config.cors.origins.length > 0 ? 'Accept, Origin' : 'Accept';
  }

  /** The render suffix of each format for a declaration (etag.ts): part of every ETag derived from the upstream's. */
  suffixesOf(declaration: string, vary: string = this.vary): readonly string[] {
    return FORMATS.map((f) => renderSuffix(declaration, f.contentType, vary));
  }

  /** The Vary of a resource's answers: the gateway's, and the request headers it varies with. */
  varyOf(r: { readonly vary: CompiledVary | null }): string {
    const headers = r.vary?.varyHeaders ?? [];
    return headers.length === 0 ? this.vary : `${this.vary}, ${headers.join(', ')}`;
  }

  /** The JSON form of a resource as a cache entry (other formats are rendered from it when asked for). */
  entry(resource: Resource, how: EntryOptions): CacheEntry {
    const json = FORMATS[JSON_INDEX] as (typeof FORMATS)[number];
    const { freshness, validator = null, vary = this.vary, exposed = null } = how;
    const rep = new Representation(
      renderBody(resource, json),
      json.contentType,
      freshness.cacheControl,
      freshness.storedAtMs,
      freshness.expiresAtMs,
      vary,
      freshness.staleAllowed,
      etagFor(validator, JSON_INDEX),
      exposed,
    );
    return new CacheEntry([rep], freshness, how.groups, how.embeddedRel, validator);
  }

  /**
   * Renders a resource and caches it under `path` when storable and no invalidation overtook the
   * load (`ticket`). A newer answer that may not be kept replaces the old copy all the same: none
   * may go stale-serving.
   */
  store(path: string, resource: Resource, how: EntryOptions & { readonly ticket: number }): CacheEntry {
    const entry = this.entry(resource, how);
    if (this.storable(how.freshness)) this.#ctx.cache.setIfCurrent(path, entry, how.ticket);
    else this.#ctx.cache.delete(path);
    return entry;
  }

  /** May an answer with this freshness be kept at all? */
  storable(freshness: Freshness): boolean {
    return isStorable(freshness, this.#ctx.clock.now());
  }

  /**
   * The representation in `format` of a cached entry that lacks it (a format not asked for before):
   * rendered from its JSON and stored with it, so the next request in this format is a plain hit.
   * A cached absence throws the source's 404.
   */
  addVariant(path: string, entry: CacheEntry, format: number, source: Absence): Representation {
    const next = entry.withFormat(format, likeJson);
    if (next === null) throw source.notFound();
    // Only in place of the entry it was made from: a newer one may have been stored meanwhile.
    if (this.#ctx.cache.get(path) === entry) this.#ctx.cache.set(path, next);
    return next.variant(format) as Representation;
  }

  /** The representation of an entry in format `index`, rendered when the entry lacks it (not stored: a write's answer). */
  variantOf(entry: CacheEntry, index: number): Representation {
    const have = entry.variant(index);
    if (have !== undefined) return have;
    const next = entry.withFormat(index, likeJson);
    if (next === null) throw new Error('a cached absence has no representation');
    return next.variant(index) as Representation;
  }

  /**
   * The upstream says there is no such resource. With cache.notFoundSeconds, that is remembered
   * (a cached absence) so repeated reads of an unknown id do not each reach the upstream; a write
   * that creates the item invalidates it. Returns the source's 404, to throw.
   */
  storeAbsent(path: string, groups: readonly string[], source: Absence, ticket: number): HgError {
    const { cache, clock, config } = this.#ctx;
    const seconds = config.cache.notFoundSeconds;
    if (seconds === 0) {
      cache.delete(path);
      return source.notFound();
    }
    const now = clock.now();
    cache.setIfCurrent(path, new CacheEntry([], { storedAtMs: now, expiresAtMs: now + seconds * 1000, staleAllowed: false }, groups, null), ticket);
    return source.notFound();
  }

  /** Freshness of a resource made here now, without an upstream (API root, OpenAPI document). */
  localFreshness(maxAgeSeconds = this.#ctx.config.cache.maxAgeSeconds): Freshness {
    return localFreshness(this.#ctx.clock.now(), maxAgeSeconds);
  }

  /** Freshness of an upstream answer received now: the upstream may shorten our lifetime (`maxAgeSeconds`), never lengthen it. */
  upstreamFreshness(result: { readonly freshness: UpstreamFreshness; readonly ageSeconds: number }, maxAgeSeconds: number): Freshness {
    return upstreamFreshness(result.freshness, result.ageSeconds, maxAgeSeconds, this.#ctx.clock.now());
  }
}
