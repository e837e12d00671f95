import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { authorize } from '../auth/authenticate.ts';
import { CACHE_STATUS_SLOT_FROM_END, Representation } from '../cache/representation.ts';
import { SingleFlight } from '../cache/single-flight.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { missStatus } from '../http/cache-status.ts';
import { ifNoneMatchMatches } from '../http/conditional.ts';
import { acceptsJson } from '../http/negotiate.ts';
import type { HgResponse } from '../http/response.ts';
import type { RouteDef } from '../http/router.ts';
import { traceOf } from '../http/trace.ts';
import { renderCustomer } from './customer-representation.ts';
import { parseCustomerId } from './customer-id.ts';

const PREFIX = '/api/customers/';
const JSON_TYPE = 'application/json';

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

export function customerRoutes(ctx: GatewayContext): RouteDef[] {
  const { config, clock, cache, upstream, verifier } = ctx;
  const { maxAgeSeconds } = config.cache;
  const exposeFields = config.resources.customers.exposeFields;
  const requiredScope = config.auth.requiredScope;
  const flights = new SingleFlight<Representation>();

  async function fetchCustomer(id: number, key: string, req: IncomingMessage, res: HgResponse): Promise<Representation> {
    const started = performance.now();
    let result;
    try {
      result = await upstream.getJson(`/customers/${id}`, traceOf(req, res.requestId));
    } finally {
      res.upstreamMs = performance.now() - started;
    }
    if (!result.found) throw new HgError('HG_ERR_CUSTOMER_NOT_FOUND');
    const body = Buffer.from(JSON.stringify(renderCustomer(result.json, id, exposeFields)));
    const { noStore, maxAgeSeconds: upstreamMaxAge } = result.freshness;
    // The upstream may shorten our lifetime, never lengthen it.
    const lifetime = upstreamMaxAge === null ? maxAgeSeconds : Math.min(maxAgeSeconds, upstreamMaxAge);
    const storedAtMs = clock.now() - result.ageSeconds * 1000;
    const rep = new Representation(body, JSON_TYPE, noStore ? 'no-store' : `max-age=${lifetime}`, storedAtMs, storedAtMs + lifetime * 1000);
    if (!noStore && rep.expiresAtMs > clock.now()) cache.set(key, rep);
    return rep;
  }

  async function miss(req: IncomingMessage, res: HgResponse, key: string, id: number): Promise<void> {
    const collapsed = flights.has(key);
    res.cacheOutcome = collapsed ? 'collapsed' : 'miss';
    const rep = await flights.run(key, () => fetchCustomer(id, key, req, res));
    writeRepresentation(req, res, rep, clock.now(), missStatus(rep.cacheControl !== 'no-store', collapsed));
  }

  function serve(req: IncomingMessage, res: HgResponse, key: string, id: number): void | Promise<void> {
    if (!acceptsJson(req.headers.accept)) throw new HgError('HG_ERR_NOT_ACCEPTABLE');
    const now = clock.now();
    const hit = cache.fresh(key, now);
    if (hit !== undefined) {
      res.cacheOutcome = 'hit';
      return writeRepresentation(req, res, hit, now);
    }
    return miss(req, res, key, id);
  }

  const readCustomer = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    const id = parseCustomerId(path.slice(PREFIX.length));
    // Only the canonical spelling names a customer, so the path itself is the cache key and links.self.
    if (id === null) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
    const principal = authorize(req, verifier, config.auth, requiredScope);
    if (principal instanceof Promise) {
      return principal.then((p) => {
        res.subject = p.subject;
        return serve(req, res, path, id);
      });
    }
    res.subject = principal.subject;
    return serve(req, res, path, id);
  };

  return [
    { method: 'GET', path: `${PREFIX}:id`, handler: readCustomer },
    { method: 'HEAD', path: `${PREFIX}:id`, handler: readCustomer },
  ];
}
