import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { CACHE_STATUS_SLOT_FROM_END, Representation } from '../cache/representation.ts';
import { SingleFlight } from '../cache/single-flight.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { missStatus } from '../http/cache-status.ts';
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
  res.bytes = rep.body.length;
  res.writeHead(200, headers);
  res.end(rep.body);
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

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
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
   * beyond the key (and for JSON the key is the path itself). A miss runs `load` once per path.
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
    return this.#miss(req, res, path, format, load, a, b);
  }

  /** A miss: one load per path (single-flight); callers that joined a running load are "collapsed". */
  async #miss(req: IncomingMessage, res: HgResponse, path: string, format: number, load: Loader, a: number, b: number): Promise<void> {
    const collapsed = this.#flights.has(path);
    res.cacheOutcome = collapsed ? 'collapsed' : 'miss';
    const started = performance.now();
    let reps: readonly Representation[];
    try {
      reps = await this.#flights.run(path, () => load(path, a, b, traceOf(req, res.requestId)));
    } finally {
      res.upstreamMs = performance.now() - started;
    }
    const rep = reps[format] as Representation;
    writeRepresentation(req, res, rep, this.#ctx.clock.now(), missStatus(rep.cacheControl !== 'no-store', collapsed));
  }

  /** Renders a resource in every format and caches each under path + format when storable. */
  store(path: string, resource: Resource, freshness: Freshness): Representation[] {
    const { cache, clock } = this.#ctx;
    const storable = freshness.storable && freshness.expiresAtMs > clock.now();
    return FORMATS.map((format) => {
      const rep = new Representation(renderBody(resource, format), format.contentType, freshness.cacheControl, freshness.storedAtMs, freshness.expiresAtMs, this.vary);
      if (storable) cache.set(path + format.keySuffix, rep);
      return rep;
    });
  }

  /** Freshness of a resource made here, without an upstream (API root, OpenAPI document). */
  localFreshness(): Freshness {
    const maxAge = this.#ctx.config.cache.maxAgeSeconds;
    const now = this.#ctx.clock.now();
    return { storedAtMs: now, expiresAtMs: now + maxAge * 1000, cacheControl: `max-age=${maxAge}`, storable: true };
  }

  /** Freshness of an upstream answer: the upstream may shorten our lifetime, never lengthen it. */
  upstreamFreshness(result: UpstreamResult & { found: true }): Freshness {
    const maxAge = this.#ctx.config.cache.maxAgeSeconds;
    const { noStore, maxAgeSeconds: upstreamMaxAge } = result.freshness;
    const lifetime = upstreamMaxAge === null ? maxAge : Math.min(maxAge, upstreamMaxAge);
    const storedAtMs = this.#ctx.clock.now() - result.ageSeconds * 1000;
    return { storedAtMs, expiresAtMs: storedAtMs + lifetime * 1000, cacheControl: noStore ? 'no-store' : `max-age=${lifetime}`, storable: !noStore };
  }
}
