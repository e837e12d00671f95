import type { TestUpstream } from './upstream.ts';

/** Customer ids of the 20 sales on the first page: 3 distinct customers. */
export const SALE_CUSTOMERS = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2] as const;

/**
 * The shipped customers and orders with their relations declared embeddable, and `sales`: a
 * top-level collection of orders of many customers, each linking to its customer.
 */
export function embedOverrides(more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: { ownerClaim: 'customer_id' },
    resources: {
      customers: { embed: { orders: { target: 'orders', kind: 'collection' } } },
      orders: {
        embed: { customer: { target: 'customers' } },
        collection: { embed: { customer: { target: 'customers' } } },
      },
      sales: {
        path: '/api/sales/{id}',
        params: { id: 'integer' },
        upstream: '/sales/{id}',
        fields: ['id', 'total'],
        linkFields: ['customerId'],
        links: { customer: '/api/customers/{customerId}' },
        singular: 'sale',
        collection: { path: '/api/sales', upstream: '/sales', total: '/total' },
        embed: { customer: { target: 'customers' } },
      },
    },
    ...more,
  };
}

/** The upstream's first page of 20 sales (offset 0, limit 20). */
export function serveSales(upstream: TestUpstream): void {
  const items = SALE_CUSTOMERS.map((customerId, i) => ({ id: i + 1, total: 10 + i, customerId }));
  upstream.on('/sales?offset=0&limit=20', { kind: 'json', body: { items, total: 20 } });
}

/** Before each test: the upstream as started (with its sales), and nothing cached. */
export async function freshEmbedWorld(fx: {
  readonly upstream: TestUpstream;
  readonly gw: { readonly gateway: { purge(path: null): Promise<unknown> } };
}): Promise<void> {
  fx.upstream.reset();
  serveSales(fx.upstream);
  await fx.gw.gateway.purge(null);
}
