import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('orders', () => {
  let fx: Fixture;
  let token: string;
  const read = (path: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...bearer(token), ...headers });

  before(async () => {
    fx = await startFixture({ resources: { orders: { exposeFields: ['status', 'total'] } } });
    token = await fx.token();
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test("a customer's links.orders lists its orders with the configured fields and links", async () => {
    const customer = (await read('/api/customers/7')).json() as { links: { orders: string } };
    const res = await read(customer.links.orders);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), {
      items: [
        { id: 701, status: 'paid', total: 10.5, links: { self: '/api/customers/7/orders/701', customer: '/api/customers/7' } },
        { id: 702, status: 'shipped', total: 20.5, links: { self: '/api/customers/7/orders/702', customer: '/api/customers/7' } },
      ],
      links: { self: '/api/customers/7/orders', customer: '/api/customers/7' },
    });
    assert.ok(fx.upstream.paths.includes('/customers/7/orders'));
  });

  test('one order is read from the upstream path of the same shape, and fields not listed stay inside', async () => {
    const res = await read('/api/customers/7/orders/702');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { id: 702, status: 'shipped', total: 20.5, links: { self: '/api/customers/7/orders/702', customer: '/api/customers/7' } });
    assert.doesNotMatch(res.text, /warehouse|placedAt/);
    assert.deepEqual(fx.upstream.paths, ['/customers/7/orders/702']);
  });

  test('orders are cached like customers', async () => {
    await read('/api/customers/8/orders');
    const again = await read('/api/customers/8/orders');
    assert.equal(again.status, 200);
    assert.equal(fx.upstream.hits('/customers/8/orders'), 1);
  });

  test('the orders of an unknown customer are a 404 customer-not-found problem', async () => {
    const res = await read('/api/customers/2000000/orders');
    assert.equal(res.status, 404);
    assert.equal(problemOf(res).code, 'HG_ERR_CUSTOMER_NOT_FOUND');
  });

  test('an unknown order is a 404 order-not-found problem', async () => {
    const res = await read('/api/customers/7/orders/799');
    assert.equal(res.status, 404);
    assert.equal(problemOf(res).code, 'HG_ERR_ORDER_NOT_FOUND');
  });

  test('non-canonical ids are 404 without an upstream request', async () => {
    for (const path of ['/api/customers/07/orders', '/api/customers/7/orders/0701', '/api/customers/x/orders/1', '/api/customers/7/orders/%37']) {
      const res = await read(path);
      assert.equal(res.status, 404, path);
      assert.equal(problemOf(res).code, 'HG_ERR_ROUTE_NOT_FOUND');
    }
    assert.equal(fx.upstream.hits(), 0);
  });

  test('an upstream order whose id differs from the requested one is a 502', async () => {
    fx.upstream.on('/customers/9/orders/901', { kind: 'json', body: { id: 902, status: 'paid' } });
    assert.equal((await read('/api/customers/9/orders/901')).status, 502);
    fx.upstream.on('/customers/9/orders', { kind: 'json', body: { orders: [] } });
    assert.equal((await read('/api/customers/9/orders')).status, 502);
  });

  // Regression: /api/customers/7/orders?offset=2 answered the whole list, where a paged collection
  // refuses a parameter it does not know with a 400 naming it.
  test('a query parameter on the unpaged orders is a 400 problem naming it, before any upstream request', async () => {
    for (const [query, name] of [
      ['?offset=2', 'offset'],
      ['?limit=1', 'limit'],
      ['?status=paid', 'status'],
      ['?&x', 'x'],
    ] as const) {
      const res = await read(`/api/customers/7/orders${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const problem = problemOf(res);
      assert.equal(problem.code, 'HG_ERR_INVALID_QUERY');
      assert.match(problem.detail, new RegExp(`"${name}"`), query);
    }
    const odd = await read('/api/customers/7/orders?%3Cscript%3E=1');
    assert.equal(odd.status, 400);
    assert.doesNotMatch(problemOf(odd).detail, /script/);
    assert.equal(fx.upstream.hits(), 0);
  });

  test('an empty query on the unpaged orders is no parameter: the list is answered', async () => {
    for (const query of ['?', '?&']) assert.equal((await read(`/api/customers/7/orders${query}`)).status, 200, query);
  });

  test('orders need a token', async () => {
    assert.equal((await get(`${fx.gw.url}/api/customers/7/orders`)).status, 401);
    assert.equal((await get(`${fx.gw.url}/api/customers/7/orders/701`)).status, 401);
  });
});
