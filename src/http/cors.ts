import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsConfig } from '../config/types.ts';
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
export class CorsPolicy {
  readonly #origins: ReadonlySet<string>;
  readonly #any: boolean;
  readonly #maxAge: string;
  readonly #allowHeaders: string;
  readonly #exposeHeaders: string;

  constructor(config: CorsConfig) {
    this.#origins = new Set(config.origins);
    this.#any = this.#origins.has('*');
    this.#maxAge = String(config.maxAgeSeconds);
    this.#allowHeaders = headerList(ALLOWED_HEADERS, config.allowHeaders);
    this.#exposeHeaders = headerList(EXPOSED_HEADERS, config.exposeHeaders);
  }

  allows(origin: string): boolean {
    return this.#any || this.#origins.has(origin);
  }

  /**
   * Adds the CORS headers for this request, and answers it when it is a preflight for a known
   * path from an allowed origin. Returns true when the request has been answered.
   */
  handle(req: IncomingMessage, res: ServerResponse, router: Router, path: string): boolean {
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !this.allows(origin)) return false;
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      const allowed = router.allowedMethods(path);
      if (allowed.length === 0) return false; // unknown path: the router's 404
      res.writeHead(204, {
        'Access-Control-Allow-Methods': allowed.join(', '),
        'Access-Control-Allow-Headers': this.#allowHeaders,
        'Access-Control-Max-Age': this.#maxAge,
        'Cache-Control': 'no-store',
        'Content-Length': 0,
      });
      res.end();
      return true;
    }
    res.setHeader('Access-Control-Expose-Headers', this.#exposeHeaders);
    return false;
  }
}
