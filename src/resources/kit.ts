import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { CACHE_STATUS_SLOT_FROM_END, Representation } from '../cache/representation.ts';
import { SingleFlight } from '../cache/single-flight.ts';
import type { GatewayContext } from '../context.ts';
import { HgError, type HgErrorCode } from '../errors.ts';
import { missStatus, staleStatus, type StaleReason } from '../http/cache-status.ts';
import { ifNoneMatchMatches } from '../http/conditional.ts';
import { NONE_ACCEPTABLE, Negotiator } from '../http/negotiate.ts';
import { FORMATS, renderBody } from '../hypermedia/formats.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { HgResponse } from '../http/response.ts';
import { traceOf } from '../http/trace.ts';
import type { UpstreamResult, UpstreamTrace } from '../upstream/client.ts';

/** How long a rendered resource may be served, and whether it may be stored at all. */
export interface Freshness {
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
  readonly cacheControl: string;
  readonly storable: boolean;
  /** May it answer once expired (see UpstreamFreshness.staleAllowed)? */
  readonly staleAllowed: boolean;
}

/**
 * Loads a resource on a cache miss; returns one representation per entry of FORMATS. `trace`
 * (request id, traceparent) goes to the upstream with the request.
 */
export type Loader = (path: string, a: number, b: number, trace: UpstreamTrace) => Promise<readonly Representation[]>;

/**
 * Writes a representation: 304 when If-None-Match matches, else 200 (no body for HEAD).
 * `cacheStatus` replaces the hit's RFC 9211 Cache-Status (a miss, a stale answer); a hit writes
 * the shared header list with only the request id put in its slot.
 */
export function writeRepresentation(req: IncomingMessage, res: HgResponse, rep: Representation, nowMs: number, cacheStatus?: string): void {
  const age = rep.ageAt(nowMs);
  const ifNoneMatch = req.headers['if-none-match'];
  const notModified = ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, rep.etag);
  let headers = notModified ? rep.notModifiedHeaders(age) : rep.headers(age);
  if (cacheStatus !== undefined) {
    headers = headers.slice();
    headers[headers.length - CACHE_STATUS_SLOT_FROM_END] = cacheStatus;
  }
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
/** The upstream's word that a resource does not exist. */
const GONE: ReadonlySet<HgErrorCode> = new Set(['HG_ERR_CUSTOMER_NOT_FOUND', 'HG_ERR_ORDER_NOT_FOUND']);

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
 * What every resource route shares: format negotiation, the cache keyed by path + format,
 * single-flight per path, and rendering every format at once so each format is cached.
 */
export class ResourceKit {
  readonly #ctx: GatewayContext;
  readonly #negotiator = new Negotiator(FORMATS.map((f) => f.contentType));
  readonly #flights = new SingleFlight<readonly Representation[]>();
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
   * The hot path: a fresh cached representation is written without a promise or an allocation
   * beyond the key (and for JSON the key is the path itself). Otherwise see #notFresh.
   */
  respond(req: IncomingMessage, res: HgResponse, path: string, format: number, load: Loader, a: number, b: number): void | Promise<void> {
    const suffix = (FORMATS[format] as (typeof FORMATS)[number]).keySuffix;
    const key = suffix === '' ? path : path + suffix;
    const { cache, clock } = this.#ctx;
    const now = clock.now();
    const hit = cache.fresh(key, now);
    if (hit !== undefined) {
      res.cacheOutcome = 'hit';
      return writeRepresentation(req, res, hit, now);
    }
    return this.#notFresh(req, res, key, path, format, load, a, b, now);
  }

  /**
   * Nothing fresh. An entry expired less than cache.staleWhileRevalidateSeconds ago answers at
   * once while one background load per path refreshes it (RFC 5861 section 3); otherwise `load`
   * runs once per path.
   */
  #notFresh(req: IncomingMessage, res: HgResponse, key: string, path: string, format: number, load: Loader, a: number, b: number, now: number): void | Promise<void> {
    const stale = this.#swrMs > 0 ? this.#staleWithin(key, now, this.#swrMs) : undefined;
    if (stale === undefined) return this.#miss(req, res, key, path, format, load, a, b);
    if (!this.#flights.has(path)) {
      this.#flights.run(path, () => load(path, a, b, traceOf(req, res.requestId))).catch((err: unknown) => this.#refreshFailed(path, err));
    }
    this.#serveStale(req, res, stale, now, 'stale-while-revalidate', false);
  }

  /**
   * A miss: one load per path (single-flight); callers that joined a running load are
   * "collapsed". When the upstream fails, an entry expired less than cache.staleIfErrorSeconds
   * ago answers instead of the error (RFC 5861 section 4).
   */
  async #miss(req: IncomingMessage, res: HgResponse, key: string, path: string, format: number, load: Loader, a: number, b: number): Promise<void> {
    const collapsed = this.#flights.has(path);
    res.cacheOutcome = collapsed ? 'collapsed' : 'miss';
    const started = performance.now();
    let reps: readonly Representation[];
    try {
      reps = await this.#flights.run(path, () => load(path, a, b, traceOf(req, res.requestId)));
    } catch (err) {
      res.upstreamMs = performance.now() - started;
      this.#forgetIfGone(path, err);
      if (!isUpstreamFailure(err)) throw err;
      const now = this.#ctx.clock.now();
      const stale = this.#staleWithin(key, now, this.#sieMs);
      if (stale === undefined) throw err;
      this.#ctx.logger.warn('served a stale entry: the upstream failed', {
        reqId: res.requestId,
        path,
        code: err.code,
        cause: causeOf(err),
        staleSeconds: Math.floor((now - stale.expiresAtMs) / 1000),
      });
      // The open breaker refuses before anything is sent: then the request never went forward.
      this.#serveStale(req, res, stale, now, 'stale-if-error', err.code !== 'HG_ERR_UPSTREAM_UNAVAILABLE');
      return;
    }
    res.upstreamMs = performance.now() - started;
    const rep = reps[format] as Representation;
    writeRepresentation(req, res, rep, this.#ctx.clock.now(), missStatus(rep.cacheControl !== 'no-store', collapsed));
  }

  /** The cached entry for `key` if it may still answer `windowMs` after its expiry. */
  #staleWithin(key: string, now: number, windowMs: number): Representation | undefined {
    const entry = this.#ctx.cache.get(key);
    return entry !== undefined && entry.staleAllowed && now < entry.expiresAtMs + windowMs ? entry : undefined;
  }

  /** Writes a stale entry with its true Age (above max-age) and says so in Cache-Status. */
  #serveStale(req: IncomingMessage, res: HgResponse, rep: Representation, now: number, reason: StaleReason, forwarded: boolean): void {
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
    this.#forgetIfGone(path, err);
    const code = err instanceof HgError ? err.code : 'HG_ERR_INTERNAL';
    const fields = { path, code, cause: causeOf(err) };
    if (code === 'HG_ERR_UPSTREAM_UNAVAILABLE') this.#ctx.logger.debug('background refresh refused by the open circuit breaker', fields);
    else this.#ctx.logger.warn('background refresh failed', fields);
  }

  /** The upstream says the resource no longer exists: no stale copy of it may answer later. */
  #forgetIfGone(path: string, err: unknown): void {
    if (err instanceof HgError && GONE.has(err.code)) this.#forget(path);
  }

  #forget(path: string): void {
    for (const format of FORMATS) this.#ctx.cache.delete(path + format.keySuffix);
  }

  /** Renders a resource in every format and caches each under path + format when storable. */
  store(path: string, resource: Resource, freshness: Freshness): Representation[] {
    const { cache, clock } = this.#ctx;
    const storable = freshness.storable && freshness.expiresAtMs > clock.now();
    // A newer answer that may not be kept replaces the old copy all the same: none may go stale-serving.
    if (!storable) this.#forget(path);
    return FORMATS.map((format) => {
      const rep = new Representation(renderBody(resource, format), format.contentType, freshness.cacheControl, freshness.storedAtMs, freshness.expiresAtMs, this.vary, freshness.staleAllowed);
      if (storable) cache.set(path + format.keySuffix, rep);
      return rep;
    });
  }

  /** Freshness of a resource made here, without an upstream (API root, OpenAPI document). */
  localFreshness(): Freshness {
    const maxAge = this.#ctx.config.cache.maxAgeSeconds;
    const now = this.#ctx.clock.now();
    return { storedAtMs: now, expiresAtMs: now + maxAge * 1000, cacheControl: `max-age=${maxAge}`, storable: true, staleAllowed: true };
  }

  /** Freshness of an upstream answer: the upstream may shorten our lifetime, never lengthen it. */
  upstreamFreshness(result: UpstreamResult & { found: true }): Freshness {
    const maxAge = this.#ctx.config.cache.maxAgeSeconds;
    const { noStore, maxAgeSeconds: upstreamMaxAge, staleAllowed } = result.freshness;
    const lifetime = upstreamMaxAge === null ? maxAge : Math.min(maxAge, upstreamMaxAge);
    const storedAtMs = this.#ctx.clock.now() - result.ageSeconds * 1000;
    return { storedAtMs, expiresAtMs: storedAtMs + lifetime * 1000, cacheControl: noStore ? 'no-store' : `max-age=${lifetime}`, storable: !noStore, staleAllowed };
  }
}
