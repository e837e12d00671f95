import type { JsonSchema } from '../http/route-doc.ts';

/**
 * The component schemas of the OpenAPI document: every body the routes answer with, in plain
 * JSON (the seed's `links` of paths) and in HAL (`_links` of `{href}`, `_embedded` items).
 */
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const path: JsonSchema = { type: 'string', pattern: '^/api' };
const halLink: JsonSchema = ref('HalLink');
const links = (names: readonly string[], link: JsonSchema, optional: readonly string[] = []): JsonSchema => ({
  type: 'object',
  required: [...names],
  properties: Object.fromEntries([...names, ...optional].map((n) => [n, link])),
});

const customerFields = {
  id: { type: 'integer', minimum: 1, description: 'Equals the last segment of links.self.' },
  name: { type: 'string' },
  status: { type: 'string', description: 'A textual label; the set of values is the upstream service\'s.' },
};
const orderFields = { id: { type: 'integer', minimum: 1 } };
const pageRels = ['self', 'first', 'last'];
const pageOptional = ['prev', 'next'];
const templatedJson: JsonSchema = { type: 'object', required: ['href', 'templated'], properties: { href: { type: 'string' }, templated: { const: true } } };

export const COMPONENT_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  HalLink: {
    type: 'object',
    required: ['href'],
    properties: { href: { type: 'string' }, templated: { type: 'boolean' } },
  },
  Customer: {
    type: 'object',
    description: 'The seed\'s customer; fields listed in resources.customers.exposeFields appear too.',
    required: ['id', 'name', 'status', 'links'],
    properties: { ...customerFields, links: links(['self', 'orders'], path) },
  },
  CustomerHal: {
    type: 'object',
    required: ['_links', 'id', 'name', 'status'],
    properties: { _links: links(['self', 'orders'], halLink), ...customerFields },
  },
  CustomerPage: {
    type: 'object',
    required: ['items', 'total', 'links'],
    properties: {
      items: { type: 'array', items: ref('Customer') },
      total: { type: 'integer', minimum: 0 },
      links: links(pageRels, path, pageOptional),
    },
  },
  CustomerPageHal: {
    type: 'object',
    required: ['_links', 'total', '_embedded'],
    properties: {
      _links: links(pageRels, halLink, pageOptional),
      total: { type: 'integer', minimum: 0 },
      _embedded: { type: 'object', required: ['customers'], properties: { customers: { type: 'array', items: ref('CustomerHal') } } },
    },
  },
  Order: {
    type: 'object',
    description: 'An order; fields listed in resources.orders.exposeFields appear too.',
    required: ['id', 'links'],
    properties: { ...orderFields, links: links(['self', 'customer'], path) },
  },
  OrderHal: {
    type: 'object',
    required: ['_links', 'id'],
    properties: { _links: links(['self', 'customer'], halLink), ...orderFields },
  },
  OrderList: {
    type: 'object',
    required: ['items', 'links'],
    properties: { items: { type: 'array', items: ref('Order') }, links: links(['self', 'customer'], path) },
  },
  OrderListHal: {
    type: 'object',
    required: ['_links', '_embedded'],
    properties: {
      _links: links(['self', 'customer'], halLink),
      _embedded: { type: 'object', required: ['orders'], properties: { orders: { type: 'array', items: ref('OrderHal') } } },
    },
  },
  ApiRoot: {
    type: 'object',
    required: ['links'],
    properties: {
      links: {
        type: 'object',
        required: ['self', 'customers', 'customer', 'describedby'],
        properties: { self: path, customers: path, customer: templatedJson, describedby: path },
      },
    },
  },
  ApiRootHal: {
    type: 'object',
    required: ['_links'],
    properties: { _links: links(['self', 'customers', 'customer', 'describedby'], halLink) },
  },
  OpenApiDocument: { type: 'object', description: 'This document (OpenAPI 3.1).', required: ['openapi', 'paths'] },
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details.',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string', format: 'uri' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string', description: 'The stable hypergate error code (HG_ERR_*).' },
    },
  },
};
