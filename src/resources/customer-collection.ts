import type { IncomingMessage } from 'node:http';
import type { HgResponse } from '../http/response.ts';
import type { GatewayContext } from '../context.ts';
import { getAndHead, type RouteDef } from '../http/router.ts';
import type { Link, Resource } from '../hypermedia/resource.ts';
import type { Access } from './access.ts';
import { asRecord, customerPath, customerResource, invalidRecord } from './customer-representation.ts';
import { parseCustomerId } from './customer-id.ts';
import { UPSTREAM_ERRORS, type Loader, type ResourceKit } from './kit.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, pagePath, parsePageQuery } from './page-query.ts';

/** first, prev and next only where they exist, last (RFC 8288 relation names). */
export function pageLinks(offset: number, limit: number, total: number): Record<string, Link> {
  const links: Record<string, Link> = { self: pagePath(offset, limit), first: pagePath(0, limit) };
  if (offset > 0) links['prev'] = pagePath(Math.max(0, offset - limit), limit);
  if (offset + limit < total) links['next'] = pagePath(offset + limit, limit);
  links['last'] = pagePath(total === 0 ? 0 : Math.floor((total - 1) / limit) * limit, limit);
  return links;
}

/**
 * GET/HEAD /api/customers?offset=&limit=: a page of customers from the upstream's
 * GET /customers?offset=&limit= (`{items, total}`). Each item is also cached as the customer
 * itself, so following an item's self link is a cache hit.
 */
export function customerCollectionRoutes(ctx: GatewayContext, kit: ResourceKit, access: Access): RouteDef[] {
  const { config, upstream } = ctx;
  const exposeFields = config.resources.customers.exposeFields;

  const load: Loader = async (path, offset, limit, trace) => {
    const result = await upstream.getJson(`/customers?offset=${offset}&limit=${limit}`, trace);
    if (!result.found) throw invalidRecord('customer page', 'the collection is missing');
    const body = asRecord(result.json, 'customer page');
    const records = body['items'];
    const total = body['total'];
    if (!Array.isArray(records) || records.length > limit) throw invalidRecord('customer page', 'items is not an array of at most limit records');
    if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) throw invalidRecord('customer page', 'total is not a non-negative integer');
    const freshness = kit.upstreamFreshness(result);
    const items = records.map((record) => {
      const id = parseCustomerId(String(asRecord(record, 'customer record')['id']));
      if (id === null) throw invalidRecord('customer record', 'id is not a positive integer');
      const item = customerResource(record, id, exposeFields);
      kit.store(customerPath(id), item, freshness);
      return item;
    });
    const page: Resource = { fields: { total }, links: pageLinks(offset, limit, total), embedded: { rel: 'customers', items } };
    return kit.store(path, page, freshness);
  };

  function serve(req: IncomingMessage, res: HgResponse): void | Promise<void> {
    const { offset, limit } = parsePageQuery(req.url ?? '');
    return kit.respond(req, res, pagePath(offset, limit), kit.format(req), load, offset, limit);
  }

  const readPage = (req: IncomingMessage, res: HgResponse): void | Promise<void> => {
    const principal = access.collection(req);
    if (principal instanceof Promise) return principal.then(() => serve(req, res));
    return serve(req, res);
  };

  const scopes = access.ownershipOn ? [config.auth.requiredScope, config.auth.readAnyScope] : [config.auth.requiredScope];
  return getAndHead('/api/customers', readPage, {
    operationId: 'listCustomers',
    summary: 'Read a page of customers',
    description:
      'Customers in pages. links.self is the canonical spelling of the page: both parameters, offset first ' +
      '(/api/customers?offset=0&limit=20), whatever spelling was requested. prev and next appear only where they exist.',
    params: [
      { name: 'offset', in: 'query', required: false, description: 'Index of the first customer of the page.', schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 } },
      { name: 'limit', in: 'query', required: false, description: 'Customers per page.', schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT } },
    ],
    scopes,
    ok: { description: 'A page of customers.', content: { 'application/json': 'CustomerPage', 'application/hal+json': 'CustomerPageHal' } },
    errors: ['HG_ERR_INVALID_QUERY', ...UPSTREAM_ERRORS],
  });
}
