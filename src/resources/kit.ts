import type { IncomingMessage, ServerResponse } from 'node:http';
import { Representation } from '../cache/representation.ts';
import { SingleFlight } from '../cache/single-flight.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { ifNoneMatchMatches } from '../http/conditional.ts';
import { NONE_ACCEPTABLE, Negotiator } from '../http/negotiate.ts';
import { FORMATS, renderBody } from '../hypermedia/formats.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { UpstreamResult } from '../upstream/client.ts';

/** How long a rendered resource may be served, and whether it may be stored at all. */
export interface Freshness {
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
  readonly cacheControl: string;
  readonly storable: boolean;
}

/** Loads a resource on a cache miss; returns one representation per entry of FORMATS. */
export type Loader = (path: string, a: number, b: number) => Promise<readonly Representation[]>;

/** Writes a representation: 304 when If-None-Match matches, else 200 (no body for HEAD). */
export function writeRepresentation(req: IncomingMessage, res: ServerResponse, rep: Representation, nowMs: number): void {
  const age = rep.ageAt(nowMs);
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, rep.etag)) {
    res.writeHead(304, rep.notModifiedHeaders(age) as (string | number)[]);
    res.end();
    return;
  }
  res.writeHead(200, rep.headers(age) as (string | number)[]);
  res.end(req.method === 'HEAD' ? undefined : rep.body);
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
  respond(req: IncomingMessage, res: ServerResponse, path: string, format: number, load: Loader, a: number, b: number): void | Promise<void> {
    const suffix = (FORMATS[format] as (typeof FORMATS)[number]).keySuffix;
    const key = suffix === '' ? path : path + suffix;
    const { cache, clock } = this.#ctx;
    const now = clock.now();
    const hit = cache.fresh(key, now);
    if (hit !== undefined) return writeRepresentation(req, res, hit, now);
    return this.#flights.run(path, () => load(path, a, b)).then((reps) => writeRepresentation(req, res, reps[format] as Representation, clock.now()));
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
