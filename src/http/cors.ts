import type { IncomingMessage } from 'node:http';
import type { CorsConfig } from '../config/types.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { Router } from './router.ts';

/**
 * Request headers a browser may send: Authorization for the bearer token, If-None-Match for
 * revalidation, and what writes use (Content-Type, If-Match, Idempotency-Key); cors.allowHeaders adds to them.
 */
export const ALLOWED_HEADERS: readonly string[] = ['Authorization', 'Accept', 'If-None-Match', 'Content-Type', 'If-Match', 'Idempotency-Key'];
/**
 * Response headers a script may read besides the CORS-safelisted ones: caching (ETag,
 * Cache-Status, Age), the request id to quote in a report, and what a 429 or 503 says about when
 * to come back (Retry-After, the RateLimit fields), and where a POST created its item (Location:
 * not safelisted, so without it a browser script cannot follow a 201); cors.exposeHeaders adds to them.
 */
export const EXPOSED_HEADERS: readonly string[] = ['ETag', 'Cache-Status', 'Age', 'X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Location'];

/** The defaults and the configured names, each once (names compare case-insensitively), as one field value. */
function headerList(defaults: readonly string[], added: readonly string[]): string {
  const seen = new Set<string>();
  const names: string[] = [];
  for (const name of [...defaults, ...added]) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    names.push(name);
  }
  return names.join(', ');
}

/**
 * CORS (Fetch standard, "CORS protocol") for an allow-list of origins. The allowed origin is
 * echoed, never "*", so caches keep answers apart per origin: every answer says Vary: Origin.
 * Only built when cors.origins is non-empty; otherwise the dispatcher does no CORS work at all.
 */
/** What an answer to a request without an allowed origin carries: it still varies on Origin. */
const VARY_ORIGIN: readonly string[] = ['Vary', 'Origin'];

export class CorsPolicy {
  readonly #origins: ReadonlySet<string>;
  readonly #any: boolean;
  readonly #maxAge: string;
  readonly #allowHeaders: string;
  readonly #exposeHeaders: string;
  /** The fields of an answer to each listed origin, made once: a request of theirs allocates none. */
  readonly #granted = new Map<string, readonly string[]>();

  constructor(config: CorsConfig) {
    this.#origins = new Set(config.origins);
    this.#any = this.#origins.has('*');
    this.#maxAge = String(config.maxAgeSeconds);
    this.#allowHeaders = headerList(ALLOWED_HEADERS, config.allowHeaders);
    this.#exposeHeaders = headerList(EXPOSED_HEADERS, config.exposeHeaders);
    for (const origin of this.#origins) this.#granted.set(origin, this.#grantFor(origin));
  }

  #grantFor(origin: string): readonly string[] {
    return ['Vary', 'Origin', 'Access-Control-Allow-Origin', origin, 'Access-Control-Expose-Headers', this.#exposeHeaders];
  }

  allows(origin: string): boolean {
    return this.#any || this.#origins.has(origin);
  }

  /**
   * Adds the CORS headers for this request, and answers it when it is a preflight for a known
   * path from an allowed origin. Returns true when the request has been answered.
   */
  handle(req: IncomingMessage, res: HgResponse, router: Router, path: string): boolean {
    const origin = req.headers.origin;
    if (origin === undefined || !this.allows(origin)) {
      res.deferHeaders(VARY_ORIGIN);
      return false;
    }
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      const allowed = router.allowedMethods(path);
      // Unknown path: the router's 404, which grants the origin but exposes nothing.
      if (allowed.length === 0) {
        res.deferHeaders(['Vary', 'Origin', 'Access-Control-Allow-Origin', origin]);
        return false;
      }
      res.writeHead(204, [
        'Vary',
        'Origin',
        'Access-Control-Allow-Origin',
        origin,
        'Access-Control-Allow-Methods',
        allowed.join(', '),
        'Access-Control-Allow-Headers',
        this.#allowHeaders,
        'Access-Control-Max-Age',
        this.#maxAge,
        'Cache-Control',
        'no-store',
        'Content-Length',
        0,
      ]);
      res.end();
      return true;
    }
    // An origin allowed by "*" is any origin: its list is made per request, not kept.
    res.deferHeaders(this.#granted.get(origin) ?? this.#grantFor(origin));
    return false;
  }
}
