import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { embedOverrides } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('embedding bounds and the fail policy', () => {
  let fx: Fixture;
  let any: string;
  const read = (path: string) => get(`${fx.gw.url}${path}`, bearer(any));
  const sales = (limit: number, customers: readonly number[]): void =>
    fx.upstream.on(`/sales?offset=0&limit=${limit}`, {
      kind: 'json',
      body: { items: customers.map((customerId, i) => ({ id: i + 1, total: 1, customerId })), total: limit },
    });

  before(async () => {
    const overrides = embedOverrides({ embedding: { maxParts: 3 } });
    const resources = overrides['resources'] as Record<string, Record<string, unknown>>;
    resources['customers'] = { embed: { orders: { target: 'orders', kind: 'collection', onError: 'fail' } } };
    (resources['sales'] as Record<string, unknown>)['embed'] = { customer: { target: 'customers', maxParts: 2 } };
    fx = await startFixture(overrides);
    any = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
  });
  beforeEach(async () => {
    fx.upstream.reset();
    await fx.gw.gateway.purge(null);
  });
  after(() => fx.close());

  test("more parts than a relation's maxParts is a 400 naming the relation, before any part is read", async () => {
    sales(3, [1, 2, 3]);
    const res = await read('/api/sales?limit=3&embed=items.customer');
    assert.equal(res.status, 400);
    assert.equal(problemOf(res).code, 'HG_ERR_INVALID_QUERY');
    assert.equal(problemOf(res).detail, 'Query parameter "embed": "items.customer" would bring 3 parts; this relation brings at most 2.');
    assert.deepEqual(fx.upstream.paths, ['/sales?offset=0&limit=3']);
  });

  test('more parts than an answer may embed is a 400 naming the bound, before any part of that level is read', async () => {
    sales(4, [1, 2, 1, 2]);
    const res = await read('/api/sales?limit=4&embed=items.customer.orders');
    assert.equal(res.status, 400);
    assert.equal(problemOf(res).detail, 'Query parameter "embed" would bring 4 parts; an answer embeds at most 3.');
    assert.deepEqual(
      fx.upstream.paths.filter((p) => p.endsWith('/orders')),
      [],
    );
  });

  test('parts within both bounds are embedded', async () => {
    sales(4, [1, 2, 1, 2]);
    const res = await read('/api/sales?limit=4&embed=items.customer');
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], undefined);
  });

  test('with onError "fail", a part the upstream cannot give fails the whole answer as that part would', async () => {
    fx.upstream.on('/customers/7/orders', { kind: 'json', status: 503, body: { error: 'down' } });
    const res = await read('/api/customers/7?embed=orders');
    assert.equal(res.status, 502);
    assert.equal(problemOf(res).code, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
  });
});
