import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ClaimValue } from '../auth/claims.ts';
import { CacheEntry, etagFor, type Validator } from '../cache/cache-entry.ts';
import { CACHE_STATUS_SLOT_FROM_END, Representation } from '../cache/representation.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { GatewayContext } from '../gateway/context.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { missStatus, staleStatus, type StaleReason } from '../protocol/cache-status.ts';
import { checkIfMatch, ifNoneMatchMatches } from '../protocol/conditional.ts';
import { NONE_ACCEPTABLE, Negotiator } from '../protocol/negotiate.ts';
import type { HgResponse } from '../protocol/response.ts';
import { callOf } from '../upstream/trace-context.ts';
import { FORMATS, JSON_INDEX, renderBody } from '../hypermedia/formats.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { UpstreamFreshness } from '../upstream/cache-control.ts';
import type { ParamValue } from './params.ts';

/** How long a rendered resource may be served, and whether it may be stored at all. */
export interface Freshness {
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
  readonly cacheControl: string;
  readonly storable: boolean;
  /** May it answer once expired (see UpstreamFreshness.staleAllowed)? */
  readonly staleAllowed: boolean;
}

/** How a resource becomes a cache entry: its freshness, invalidation groups, embedded relation and validator. */
export interface EntryOptions {
  readonly freshness: Freshness;
  readonly groups: readonly string[];
  readonly embeddedRel: string | null;
  readonly validator?: Validator | null;
}

/** Where a read route's resources come from on a miss, and what a cached absence answers. */
export interface Source {
  /**
   * Loads the resource at `path` (its parameter `values`, in path order), stores it through the
   * kit and returns its entry. `ticket` is the cache's load ticket (ResponseCache.beginLoad).
   */
  load(path: string, values: readonly ParamValue[], call: UpstreamCall, ticket: number): Promise<CacheEntry>;
  /** The invalidation groups the entry at `path` belongs to (what `load` stores it with). */
  groups(values: readonly ParamValue[]): readonly string[];
  /** The 404 a cached absence (the upstream's 404, kept cache.notFoundSeconds) answers with. */
  notFound(): HgError;
  /** Made by the gateway itself (the API root): a miss waits for no upstream, and the access line says none. */
  readonly local?: boolean;
}

/**
 * Writes a representation: 412 when If-Match does not hold, 304 when If-None-Match matches, else
 * 200 (no body for HEAD).
 * `cacheStatus` replaces the hit's RFC 9211 Cache-Status (a miss, a stale answer).
 */
export function writeRepresentation(req: IncomingMessage, res: HgResponse, rep: Representation, nowMs: number, cacheStatus?: string): void {
  const age = rep.ageAt(nowMs);
  const { headers: given } = req;
  const ifMatch = given['if-match'];
  if (ifMatch !== undefined) checkIfMatch(ifMatch, rep.etag);
  const ifNoneMatch = given['if-none-match'];
  const notModified = ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, rep.etag);
  // A shared list (representation.ts): filled here, copied by writeHead before anything else fills it.
  const headers = notModified ? rep.notModifiedHeaders(age) : rep.headers(age);
  if (cacheStatus !== undefined) headers[headers.length - CACHE_STATUS_SLOT_FROM_END] = cacheStatus;
  headers[headers.length - 1] = res.requestId;
  if (notModified) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  if (req.method === 'HEAD') {
    res.writeHead(200, headers);
    res.end();
    return;
  }
  res.bytes = rep.byteLength;
  res.writeHead(200, headers);
  res.end(rep.body, rep.encoding);
}

/** What a resource read answers when the upstream fails and no stale entry may answer (route docs list them). */
export const UPSTREAM_ERRORS = ['HG_ERR_UPSTREAM_BAD_GATEWAY', 'HG_ERR_UPSTREAM_TIMEOUT', 'HG_ERR_UPSTREAM_UNAVAILABLE'] as const;
/** Upstream failures a stale entry may answer for (not a 404: the upstream did answer). */
const UPSTREAM_FAILURES: ReadonlySet<HgErrorCode> = new Set(UPSTREAM_ERRORS);

function isUpstreamFailure(err: unknown): err is HgError {
  return err instanceof HgError && UPSTREAM_FAILURES.has(err.code);
}

/** The internal reason behind an error, for the log only. */
function causeOf(err: unknown): string {
  const inner = err instanceof HgError && err.cause !== undefined ? err.cause : err;
  const text = inner instanceof Error ? `${inner.name}: ${inner.message}` : String(inner);
  return err instanceof HgError && inner !== err ? `${err.detail} (${text})` : text;
}

const NOT_ACCEPTABLE_DETAIL = `This resource is available as ${FORMATS.map((f) => f.contentType).join(' or ')}.`;

/**
 * What every resource route shares: format negotiation, the cache keyed by path (one entry holds
 * every format asked for), single-flight per path, stale answers, and cached absences.
 */
export class ResourceKit {
  readonly #ctx: GatewayContext;
  readonly #negotiator = new Negotiator(FORMATS.map((f) => f.contentType));
  readonly #flights = new SingleFlight<CacheEntry>();
  /** Every resource answer is negotiated on Accept; with CORS on it also depends on Origin. */
  readonly vary: string;
  /** cache.staleIfErrorSeconds and cache.staleWhileRevalidateSeconds, in ms. */
  readonly #sieMs: number;
  readonly #swrMs: number;

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
    this.#sieMs = ctx.config.cache.staleIfErrorSeconds * 1000;
    this.#swrMs = ctx.config.cache.staleWhileRevalidateSeconds * 1000;
    this.vary = ctx.config.cors.origins.length > 0 ? 'Accept, Origin' : 'Accept';
  }

  /** Index into FORMATS for this request; 406 when none is acceptable. */
  format(req: IncomingMessage): number {
    const index = this.#negotiator.pick(req.headers.accept);
    if (index === NONE_ACCEPTABLE) throw new HgError('HG_ERR_NOT_ACCEPTABLE', { detail: NOT_ACCEPTABLE_DETAIL });
    return index;
  }

  /**
   * The hot path: a fresh cached representation is written without a promise or an allocation.
   * `values` may be a scratch array the caller reuses: it is copied before anything waits.
   * Otherwise see #notFresh.
   */
  respond(req: IncomingMessage, res: HgResponse, path: string, format: number, source: Source, values: readonly ParamValue[], claims?: readonly ClaimValue[]): void | Promise<void> {
    const { cache, clock } = this.#ctx;
    const now = clock.now();
    const hit = cache.fresh(path, now);
    if (hit !== undefined) {
      const rep = hit.variant(format) ?? this.#variant(path, hit, format, source);
      res.cacheOutcome = 'hit';
      return writeRepresentation(req, res, rep, now);
    }
    return this.#notFresh(req, res, path, format, source, values.slice(), claims, now);
  }

  /**
   * The representation in `format` of an entry that lacks it (a format not asked for before):
   * rendered from its JSON and stored with it, so the next request in this format is a plain hit.
   * A cached absence answers its 404.
   */
  #variant(path: string, entry: CacheEntry, format: number, source: Source): Representation {
    const next = entry.withFormat(format, (body, contentType, like, etag) => new Representation(body, contentType, like.cacheControl, like.storedAtMs, like.expiresAtMs, like.vary, like.staleAllowed, etag));
    if (next === null) throw source.notFound();
    // Only in place of the entry it was made from: a newer one may have been stored meanwhile.
    if (this.#ctx.cache.get(path) === entry) this.#ctx.cache.set(path, next);
    return next.variant(format) as Representation;
  }

  /**
   * The entry at `path`, fresh from the cache or loaded (single-flight): for a route that needs to
   * know whether another resource exists. A cached or fresh absence throws its 404.
   */
  async fetch(path: string, source: Source, values: readonly ParamValue[], call: UpstreamCall): Promise<CacheEntry> {
    const entry = this.#ctx.cache.get(path);
    const found = entry !== undefined && entry.expiresAtMs > this.#ctx.clock.now() ? entry : await this.#load(path, source, values, call);
    if (found.absent) throw source.notFound();
    return found;
  }

  /**
   * Nothing fresh. An entry expired less than cache.staleWhileRevalidateSeconds ago answers at
   * once while one background load per path refreshes it (RFC 5861 section 3); otherwise `load`
   * runs once per path.
   */
  #notFresh(req: IncomingMessage, res: HgResponse, path: string, format: number, source: Source, values: readonly ParamValue[], claims: readonly ClaimValue[] | undefined, now: number): void | Promise<void> {
    const stale = this.#swrMs > 0 ? this.#staleWithin(path, now, this.#swrMs) : undefined;
    if (stale === undefined) return this.#miss(req, res, path, format, source, values, claims);
    if (!this.#flights.has(path)) {
      this.#load(path, source, values, callOf(req, res.requestId, claims)).catch((err: unknown) => this.#refreshFailed(path, err));
    }
    this.#serveStale(req, res, path, stale, format, source, now, 'stale-while-revalidate', false);
  }

  /**
   * The load under way for `path` if a new reader may join it: not when the path or one of its
   * groups was invalidated after it began. Such a load may bring the version a write (or purge)
   * replaced, and a reader that starts after the write was answered must not get it; those that
   * joined before the invalidation overlapped the write and still share it.
   */
  #joinable(path: string, source: Source, values: readonly ParamValue[]): Promise<CacheEntry> | undefined {
    const running = this.#flights.get(path);
    if (running === undefined || this.#ctx.cache.invalidatedSince(path, source.groups(values), running.stamp)) return undefined;
    return running.promise;
  }

  /** One load per path at a time (see #joinable); the cache's ticket keeps it from storing over a later invalidation. */
  #load(path: string, source: Source, values: readonly ParamValue[], call: UpstreamCall): Promise<CacheEntry> {
    const running = this.#joinable(path, source, values);
    if (running !== undefined) return running;
    const { cache, tier } = this.#ctx;
    const ticket = cache.beginLoad();
    // With a shared tier (Redis), it is asked first and the upstream only when it has nothing.
    const work = tier === null ? async () => source.load(path, values, call, ticket) : async () => tier.load(path, ticket, this.vary, source, () => source.load(path, values, call, ticket));
    return this.#flights.start(path, ticket, work, () => cache.endLoad(ticket));
  }

  /**
   * A miss: one load per path (single-flight); callers that joined a running load are
   * "collapsed". When the upstream fails, an entry expired less than cache.staleIfErrorSeconds
   * ago answers instead of the error (RFC 5861 section 4).
   */
  async #miss(req: IncomingMessage, res: HgResponse, path: string, format: number, source: Source, values: readonly ParamValue[], claims: readonly ClaimValue[] | undefined): Promise<void> {
    const collapsed = this.#joinable(path, source, values) !== undefined;
    res.cacheOutcome = collapsed ? 'collapsed' : 'miss';
    const started = performance.now();
    let entry: CacheEntry;
    try {
      entry = await this.#load(path, source, values, callOf(req, res.requestId, claims));
    } catch (err) {
      if (source.local !== true) res.upstreamMs = performance.now() - started;
      if (!isUpstreamFailure(err)) throw err;
      const now = this.#ctx.clock.now();
      const stale = this.#staleWithin(path, now, this.#sieMs);
      if (stale === undefined) throw err;
      this.#ctx.logger.warn('served a stale entry: the upstream failed', {
        reqId: res.requestId,
        path,
        code: err.code,
        cause: causeOf(err),
        staleSeconds: Math.floor((now - stale.expiresAtMs) / 1000),
      });
      // The open breaker refuses before anything is sent: then the request never went forward.
      this.#serveStale(req, res, path, stale, format, source, now, 'stale-if-error', err.code !== 'HG_ERR_UPSTREAM_UNAVAILABLE');
      return;
    }
    if (source.local !== true) res.upstreamMs = performance.now() - started;
    const rep = entry.variant(format) ?? this.#variant(path, entry, format, source);
    const now = this.#ctx.clock.now();
    // Stored as `storable` decides: not no-store, and not stale on arrival (an upstream max-age=0 or invalid freshness).
    writeRepresentation(req, res, rep, now, missStatus(rep.cacheControl !== 'no-store' && rep.expiresAtMs > now, collapsed));
  }

  /** The cached entry for `path` if it may still answer `windowMs` after its expiry (never a cached absence). */
  #staleWithin(path: string, now: number, windowMs: number): CacheEntry | undefined {
    const entry = this.#ctx.cache.get(path);
    return entry !== undefined && !entry.absent && entry.staleAllowed && now < entry.expiresAtMs + windowMs ? entry : undefined;
  }

  /** Writes a stale entry with its true Age (above max-age) and says so in Cache-Status. */
  #serveStale(req: IncomingMessage, res: HgResponse, path: string, entry: CacheEntry, format: number, source: Source, now: number, reason: StaleReason, forwarded: boolean): void {
    const rep = entry.variant(format) ?? this.#variant(path, entry, format, source);
    res.cacheOutcome = 'stale';
    this.#ctx.cache.tally.stale++;
    writeRepresentation(req, res, rep, now, staleStatus(rep.lifetimeSeconds - rep.ageAt(now), reason, forwarded));
  }

  /**
   * A background refresh has nobody to answer: its failure is logged, never thrown. One refused by
   * the open breaker is only debug: the breaker's state is in /metrics and /readyz, and a warning
   * per request while it is open would flood the log.
   */
  #refreshFailed(path: string, err: unknown): void {
    const code = err instanceof HgError ? err.code : 'HG_ERR_INTERNAL';
    const fields = { path, code, cause: causeOf(err) };
    if (code === 'HG_ERR_UPSTREAM_UNAVAILABLE') this.#ctx.logger.debug('background refresh refused by the open circuit breaker', fields);
    else if (code !== 'HG_ERR_RESOURCE_NOT_FOUND') this.#ctx.logger.warn('background refresh failed', fields);
  }

  /** The JSON form of a resource as a cache entry (other formats are rendered from it when asked for). */
  entry(resource: Resource, how: EntryOptions): CacheEntry {
    const json = FORMATS[JSON_INDEX] as (typeof FORMATS)[number];
    const { freshness, validator = null } = how;
    const rep = new Representation(renderBody(resource, json), json.contentType, freshness.cacheControl, freshness.storedAtMs, freshness.expiresAtMs, this.vary, freshness.staleAllowed, etagFor(validator, JSON_INDEX));
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
    return freshness.storable && freshness.expiresAtMs > this.#ctx.clock.now();
  }

  /** The representation of an entry in format `index`, rendered when the entry lacks it (not stored: a write's answer). */
  variantOf(entry: CacheEntry, index: number): Representation {
    const have = entry.variant(index);
    if (have !== undefined) return have;
    const next = entry.withFormat(index, (body, contentType, like, etag) => new Representation(body, contentType, like.cacheControl, like.storedAtMs, like.expiresAtMs, like.vary, like.staleAllowed, etag));
    if (next === null) throw new Error('a cached absence has no representation');
    return next.variant(index) as Representation;
  }

  /**
   * The upstream says there is no such resource. With cache.notFoundSeconds, that is remembered
   * (a cached absence) so repeated reads of an unknown id do not each reach the upstream; a write
   * that creates the item invalidates it. Returns the 404 to throw.
   */
  storeAbsent(path: string, groups: readonly string[], source: Source, ticket: number): HgError {
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

  /** Freshness of a resource made here, without an upstream (API root, OpenAPI document). */
  localFreshness(maxAge = this.#ctx.config.cache.maxAgeSeconds): Freshness {
    const now = this.#ctx.clock.now();
    return { storedAtMs: now, expiresAtMs: now + maxAge * 1000, cacheControl: `max-age=${maxAge}`, storable: true, staleAllowed: true };
  }

  /** Freshness of an upstream answer: the upstream may shorten our lifetime (`maxAge`, seconds), never lengthen it. */
  upstreamFreshness(result: { readonly freshness: UpstreamFreshness; readonly ageSeconds: number }, maxAge: number): Freshness {
    const { noStore, maxAgeSeconds: upstreamMaxAge, staleAllowed } = result.freshness;
    const lifetime = upstreamMaxAge === null ? maxAge : Math.min(maxAge, upstreamMaxAge);
    const storedAtMs = this.#ctx.clock.now() - result.ageSeconds * 1000;
    return { storedAtMs, expiresAtMs: storedAtMs + lifetime * 1000, cacheControl: noStore ? 'no-store' : `max-age=${lifetime}`, storable: !noStore, staleAllowed };
  }
}
