import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsConfig } from '../config/types.ts';
import type { Router } from './router.ts';

/** Request headers a browser may send (Authorization for the bearer token; If-None-Match for revalidation). */
const ALLOWED_HEADERS = 'Authorization, Accept, If-None-Match';
/** Response headers a script may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = 'ETag, Cache-Status, Age';

/**
 * CORS (Fetch standard, "CORS protocol") for an allow-list of origins. The allowed origin is
 * echoed, never "*", so caches keep answers apart per origin: every answer says Vary: Origin.
 * Only built when cors.origins is non-empty; otherwise the dispatcher does no CORS work at all.
 */
export class CorsPolicy {
  readonly #origins: ReadonlySet<string>;
  readonly #any: boolean;
  readonly #maxAge: string;

  constructor(config: CorsConfig) {
    this.#origins = new Set(config.origins);
    this.#any = this.#origins.has('*');
    this.#maxAge = String(config.maxAgeSeconds);
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
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': this.#maxAge,
        'Cache-Control': 'no-store',
        'Content-Length': 0,
      });
      res.end();
      return true;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    return false;
  }
}
