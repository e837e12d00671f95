import type { RESOURCE } from './resource-schema.ts';
import type { ValueOf } from './rule.ts';

/**
 * The resources the gateway declares out of the box (README "The shipped declaration, line by
 * line"): customers and their orders, served by the embedded sample service. Every key is written
 * out, so config/default.json shows an operator each key a declaration has.
 */
export const SHIPPED_RESOURCES: Readonly<Record<string, ValueOf<typeof RESOURCE>>> = {
  customers: {
    path: '/api/customers/{id}',
    params: { id: 'integer' },
    upstream: '/customers/{id}',
    service: 'upstream',
    record: '',
    fields: ['id', 'name', 'status'],
    fieldTypes: { name: 'string', status: 'string' },
    exposeFields: [],
    links: { orders: '/api/customers/{id}/orders' },
    rel: 'customer',
    singular: null,
    collection: { path: '/api/customers', upstream: '/customers', items: '/items', total: '/total', paged: true, cacheItems: true, links: {} },
    scope: null,
    owner: { claim: null, param: 'id' },
    maxAgeSeconds: null,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    writeScope: null,
    requireIfMatch: true,
    idempotency: 'optional',
    vary: null,
    sharedAcrossIdentities: false,
    schema: null,
  },
  orders: {
    path: '/api/customers/{customerId}/orders/{id}',
    params: { customerId: 'integer', id: 'integer' },
    upstream: '/customers/{customerId}/orders/{id}',
    service: 'upstream',
    record: '',
    fields: ['id'],
    fieldTypes: {},
    exposeFields: ['status', 'placedAt', 'total', 'currency'],
    links: { customer: '/api/customers/{customerId}' },
    rel: null,
    singular: 'order',
    collection: {
      path: '/api/customers/{customerId}/orders',
      upstream: '/customers/{customerId}/orders',
      items: '/items',
      total: null,
      paged: false,
      cacheItems: false,
      links: { customer: '/api/customers/{customerId}' },
    },
    scope: null,
    owner: { claim: null, param: 'customerId' },
    maxAgeSeconds: null,
    methods: ['GET'],
    writeScope: null,
    requireIfMatch: false,
    idempotency: 'optional',
    vary: null,
    sharedAcrossIdentities: false,
    schema: null,
  },
};
