import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorize } from '../auth/authenticate.ts';
import { Representation } from '../cache/representation.ts';
import { SingleFlight } from '../cache/single-flight.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { ifNoneMatchMatches } from '../http/conditional.ts';
import { acceptsJson } from '../http/negotiate.ts';
import type { RouteDef } from '../http/router.ts';
import { renderCustomer } from './customer-representation.ts';
import { parseCustomerId } from './customer-id.ts';

const PREFIX = '/api/customers/';
const JSON_TYPE = 'application/json';

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

export function customerRoutes(ctx: GatewayContext): RouteDef[] {
  const { config, clock, cache, upstream, verifier } = ctx;
  const { maxAgeSeconds } = config.cache;
  const exposeFields = config.resources.customers.exposeFields;
  const requiredScope = config.auth.requiredScope;
  const flights = new SingleFlight<Representation>();

  async function fetchCustomer(id: number, key: string): Promise<Representation> {
    const result = await upstream.getJson(`/customers/${id}`);
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

  function serve(req: IncomingMessage, res: ServerResponse, key: string, id: number): void | Promise<void> {
    if (!acceptsJson(req.headers.accept)) throw new HgError('HG_ERR_NOT_ACCEPTABLE');
    const now = clock.now();
    const hit = cache.fresh(key, now);
    if (hit !== undefined) return writeRepresentation(req, res, hit, now);
    return flights.run(key, () => fetchCustomer(id, key)).then((rep) => writeRepresentation(req, res, rep, clock.now()));
  }

  const readCustomer = (req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void> => {
    const id = parseCustomerId(path.slice(PREFIX.length));
    // Only the canonical spelling names a customer, so the path itself is the cache key and links.self.
    if (id === null) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
    const principal = authorize(req, verifier, config.auth, requiredScope);
    if (principal instanceof Promise) return principal.then(() => serve(req, res, path, id));
    return serve(req, res, path, id);
  };

  return [
    { method: 'GET', path: `${PREFIX}:id`, handler: readCustomer },
    { method: 'HEAD', path: `${PREFIX}:id`, handler: readCustomer },
  ];
}
