import type { IncomingMessage } from 'node:http';
import type { HgResponse } from '../http/response.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { getAndHead, type RouteDef } from '../http/router.ts';
import type { Access } from './access.ts';
import { customerResource } from './customer-representation.ts';
import { idParam, parseCustomerId } from './customer-id.ts';
import { UPSTREAM_ERRORS, type Loader, type ResourceKit } from './kit.ts';

export { writeRepresentation } from './kit.ts';

const PREFIX = '/api/customers/';

/** GET/HEAD /api/customers/<id>: the seed's one specified operation, and the hot path. */
export function customerRoutes(ctx: GatewayContext, kit: ResourceKit, access: Access): RouteDef[] {
  const { config, upstream } = ctx;
  const exposeFields = config.resources.customers.exposeFields;

  const load: Loader = async (path, id, _b, trace) => {
    // The upstream path is built from the validated number only, never from request text.
    const result = await upstream.getJson(`/customers/${id}`, trace);
    if (!result.found) throw new HgError('HG_ERR_CUSTOMER_NOT_FOUND');
    return kit.store(path, customerResource(result.json, id, exposeFields), kit.upstreamFreshness(result));
  };

  function serve(req: IncomingMessage, res: HgResponse, path: string, id: number): void | Promise<void> {
    return kit.respond(req, res, path, kit.format(req), load, id, 0);
  }

  const readCustomer = (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    const id = parseCustomerId(path.slice(PREFIX.length));
    // Only the canonical spelling names a customer, so the path itself is the cache key and links.self.
    if (id === null) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
    const principal = access.customer(req, id);
    if (principal instanceof Promise) return principal.then(() => serve(req, res, path, id));
    return serve(req, res, path, id);
  };

  return getAndHead(`${PREFIX}:id`, readCustomer, {
    operationId: 'getCustomer',
    summary: 'Read one customer',
    description: 'The customer with its links (self, orders). Cached for cache.maxAgeSeconds; conditional with If-None-Match.',
    params: [idParam('id', 'The customer id.')],
    scopes: [config.auth.requiredScope],
    ok: { description: 'The customer.', content: { 'application/json': 'Customer', 'application/hal+json': 'CustomerHal' } },
    errors: [
      'HG_ERR_ROUTE_NOT_FOUND',
      'HG_ERR_CUSTOMER_NOT_FOUND',
      ...(access.ownershipOn ? (['HG_ERR_NOT_OWNER'] as const) : []),
      ...UPSTREAM_ERRORS,
    ],
  });
}
