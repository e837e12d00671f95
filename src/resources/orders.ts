import type { IncomingMessage } from 'node:http';
import type { HgResponse } from '../http/response.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { getAndHead, type RouteDef } from '../http/router.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { Access } from './access.ts';
import { asRecord, copyExposed, customerPath, invalidRecord } from './customer-representation.ts';
import { idParam, parseCustomerId } from './customer-id.ts';
import { UPSTREAM_ERRORS, type Loader, type ResourceKit } from './kit.ts';

const PREFIX = '/api/customers/';
const ORDERS = '/orders';

/**
 * An upstream order record as a resource: its id, the fields listed in
 * resources.orders.exposeFields, and links to itself and its customer.
 */
export function orderResource(record: unknown, customerId: number, expectedId: number | null, exposeFields: readonly string[]): Resource {
  const fields = asRecord(record, 'order record');
  const id = parseCustomerId(String(fields['id']));
  if (id === null) throw invalidRecord('order record', 'id is not a positive integer');
  if (expectedId !== null && id !== expectedId) throw invalidRecord('order record', 'id does not match the requested order');
  const out: Record<string, unknown> = { id };
  copyExposed(out, fields, exposeFields);
  const customer = customerPath(customerId);
  return { fields: out, links: { self: `${customer}${ORDERS}/${id}`, customer } };
}

/** Splits /api/customers/<id>/orders[/<orderId>] (already matched by the router) into canonical ids. */
function idsOf(path: string): { customerId: number | null; orderId: number | null } {
  const rest = path.slice(PREFIX.length);
  const slash = rest.indexOf('/');
  const customerId = parseCustomerId(rest.slice(0, slash));
  const end = slash + ORDERS.length; // index of the "/" before <orderId>, if any
  return { customerId, orderId: end < rest.length ? parseCustomerId(rest.slice(end + 1)) : null };
}

/**
 * GET/HEAD /api/customers/<id>/orders (the customer's links.orders) and
 * /api/customers/<id>/orders/<orderId>, from the upstream's same paths.
 */
export function orderRoutes(ctx: GatewayContext, kit: ResourceKit, access: Access): RouteDef[] {
  const { config, upstream } = ctx;
  const exposeFields = config.resources.orders.exposeFields;

  const loadList: Loader = async (path, customerId, _b, trace) => {
    const result = await upstream.getJson(`/customers/${customerId}/orders`, trace);
    if (!result.found) throw new HgError('HG_ERR_CUSTOMER_NOT_FOUND');
    const records = asRecord(result.json, 'order list')['items'];
    if (!Array.isArray(records)) throw invalidRecord('order list', 'items is not an array');
    const items = records.map((record) => orderResource(record, customerId, null, exposeFields));
    const list: Resource = { fields: {}, links: { self: path, customer: customerPath(customerId) }, embedded: { rel: 'orders', items } };
    return kit.store(path, list, kit.upstreamFreshness(result));
  };

  const loadOne: Loader = async (path, customerId, orderId, trace) => {
    const result = await upstream.getJson(`/customers/${customerId}/orders/${orderId}`, trace);
    if (!result.found) throw new HgError('HG_ERR_ORDER_NOT_FOUND');
    return kit.store(path, orderResource(result.json, customerId, orderId, exposeFields), kit.upstreamFreshness(result));
  };

  const handler = (single: boolean) => (req: IncomingMessage, res: HgResponse, path: string): void | Promise<void> => {
    const { customerId, orderId } = idsOf(path);
    if (customerId === null || (single && orderId === null)) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
    const load = single ? loadOne : loadList;
    const serve = (): void | Promise<void> => kit.respond(req, res, path, kit.format(req), load, customerId, orderId ?? 0);
    const principal = access.customer(req, customerId);
    return principal instanceof Promise ? principal.then(serve) : serve();
  };

  const scopes = [config.auth.requiredScope];
  const ownership = access.ownershipOn ? (['HG_ERR_NOT_OWNER'] as const) : [];
  return [
    ...getAndHead(`${PREFIX}:id${ORDERS}`, handler(false), {
      operationId: 'listOrders',
      summary: "Read a customer's orders",
      description: 'Every order of the customer, each with links.self; the list links to itself and to the customer.',
      params: [idParam('id', 'The customer id.')],
      scopes,
      ok: { description: "The customer's orders.", content: { 'application/json': 'OrderList', 'application/hal+json': 'OrderListHal' } },
      errors: ['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_CUSTOMER_NOT_FOUND', ...ownership, ...UPSTREAM_ERRORS],
    }),
    ...getAndHead(`${PREFIX}:id${ORDERS}/:orderId`, handler(true), {
      operationId: 'getOrder',
      summary: 'Read one order of a customer',
      description: "One order, with links to itself and to its customer.",
      params: [idParam('id', 'The customer id.'), idParam('orderId', 'The order id.')],
      scopes,
      ok: { description: 'The order.', content: { 'application/json': 'Order', 'application/hal+json': 'OrderHal' } },
      errors: ['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_ORDER_NOT_FOUND', ...ownership, ...UPSTREAM_ERRORS],
    }),
  ];
}
