import type { IncomingMessage } from 'node:http';
import type { HgResponse } from '../http/response.ts';
import type { GatewayContext } from '../context.ts';
import { getAndHead, type RouteDef } from '../http/router.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { Access } from './access.ts';
import type { Loader, ResourceKit } from './kit.ts';

export const API_ROOT = '/api';
export const OPENAPI_PATH = '/api/openapi.json';

/** Everything a client may start from: the only URL a hypermedia client needs to know. */
export const API_ROOT_RESOURCE: Resource = {
  fields: {},
  links: {
    self: API_ROOT,
    customers: '/api/customers',
    customer: { href: '/api/customers/{id}', templated: true },
    describedby: OPENAPI_PATH,
  },
};

/** GET/HEAD /api. */
export function apiRootRoutes(ctx: GatewayContext, kit: ResourceKit, access: Access): RouteDef[] {
  // Made here, not upstream: it is rendered once per freshness period and served from the cache.
  const load: Loader = (path) => Promise.resolve(kit.store(path, API_ROOT_RESOURCE, kit.localFreshness()));
  const serve = (req: IncomingMessage, res: HgResponse): void | Promise<void> => kit.respond(req, res, API_ROOT, kit.format(req), load, 0, 0);
  const readRoot = (req: IncomingMessage, res: HgResponse): void | Promise<void> => {
    const principal = access.any(req);
    return principal instanceof Promise ? principal.then(() => serve(req, res)) : serve(req, res);
  };
  return getAndHead(API_ROOT, readRoot, {
    operationId: 'getApiRoot',
    summary: 'The API root',
    description:
      'Links to everything a client may do: self, customers (the collection), customer (a URI template, RFC 6570, ' +
      'marked templated) and describedby (this OpenAPI document).',
    params: [],
    scopes: [ctx.config.auth.requiredScope],
    ok: { description: 'The API root.', content: { 'application/json': 'ApiRoot', 'application/hal+json': 'ApiRootHal' } },
    errors: [],
  });
}
