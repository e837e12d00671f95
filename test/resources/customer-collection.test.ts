import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { COLLECTION_TOTAL } from '../helpers/upstream.ts';

interface Page {
  items: { id: number; name: string; links: { self: string; orders: string } }[];
  total: number;
  links: Record<string, string>;
}

describe('GET /api/customers', () => {
  let fx: Fixture;
  let token: string;
  const page = async (query: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}/api/customers${query}`, { ...bearer(token), ...headers });

  before(async () => {
    fx = await startFixture();
    token = await fx.token();
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('without a query it is the first page of 20, and self spells the defaults out', async () => {
    const res = await page('');
    assert.equal(res.status, 200);
    const body = res.json() as Page;
    assert.equal(body.items.length, 20);
    assert.equal(body.total, COLLECTION_TOTAL);
    assert.deepEqual(Object.keys(body), ['items', 'total', 'links']);
    assert.deepEqual(body.links, {
      self: '/api/customers?offset=0&limit=20',
      first: '/api/customers?offset=0&limit=20',
      next: '/api/customers?offset=20&limit=20',
      last: '/api/customers?offset=40&limit=20',
    });
    assert.deepEqual(fx.upstream.paths, ['/customers?offset=0&limit=20']);
  });

  test('items are full customer representations with their links', async () => {
    const body = (await page('?offset=5&limit=2')).json() as Page;
    assert.deepEqual(body.items, [
      { id: 6, name: 'Customer 6', status: 'active', links: { self: '/api/customers/6', orders: '/api/customers/6/orders' } },
      { id: 7, name: 'Customer 7', status: 'inactive', links: { self: '/api/customers/7', orders: '/api/customers/7/orders' } },
    ]);
  });

  test('a middle page has prev and next; the last page has no next', async () => {
    const middle = (await page('?offset=10&limit=10')).json() as Page;
    assert.equal(middle.links['prev'], '/api/customers?offset=0&limit=10');
    assert.equal(middle.links['next'], '/api/customers?offset=20&limit=10');
    const last = (await page('?offset=40&limit=10')).json() as Page;
    assert.equal(last.items.length, 5);
    assert.equal(last.links['next'], undefined);
    assert.equal(last.links['last'], '/api/customers?offset=40&limit=10');
    assert.equal(last.links['prev'], '/api/customers?offset=30&limit=10');
  });

  test('the first page has no prev, and a page past the end is empty', async () => {
    assert.equal(((await page('?offset=0&limit=5')).json() as Page).links['prev'], undefined);
    const beyond = (await page('?offset=100&limit=10')).json() as Page;
    assert.deepEqual(beyond.items, []);
    assert.equal(beyond.links['next'], undefined);
  });

  test('self is canonical: limit before offset is answered with offset first, and is the same cached page', async () => {
    const a = await page('?limit=3&offset=6');
    const b = await page('?offset=6&limit=3');
    assert.equal((a.json() as Page).links['self'], '/api/customers?offset=6&limit=3');
    assert.equal(a.headers['etag'], b.headers['etag']);
    assert.equal(fx.upstream.hits('/customers?offset=6&limit=3'), 1);
  });

  test('a page is cached, and fills the cache for each of its customers', async () => {
    await page('?offset=20&limit=3');
    await page('?offset=20&limit=3');
    assert.equal(fx.upstream.hits('/customers?offset=20&limit=3'), 1);
    const customer = await get(`${fx.gw.url}/api/customers/22`, bearer(token));
    assert.equal(customer.status, 200);
    assert.equal((customer.json() as { name: string }).name, 'Customer 22');
    const halCustomer = await get(`${fx.gw.url}/api/customers/22`, { ...bearer(token), accept: 'application/hal+json' });
    assert.equal(halCustomer.status, 200);
    assert.equal(fx.upstream.hits('/customers/22'), 0);
  });

  for (const [query, name] of [
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=abc', 'limit'],
    ['?limit=', 'limit'],
    ['?limit=010', 'limit'],
    ['?offset=-1', 'offset'],
    ['?offset=1.5', 'offset'],
    ['?offset=%31', 'offset'],
    ['?offset=99999999999999999', 'offset'],
    ['?offset=1&offset=2', 'offset'],
    ['?page=2', 'page'],
  ] as const) {
    test(`"${query}" is a 400 problem naming ${name}, before any upstream request`, async () => {
      const res = await page(query);
      assert.equal(res.status, 400);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const problem = problemOf(res);
      assert.equal(problem.code, 'HG_ERR_INVALID_QUERY');
      assert.match(problem.detail, new RegExp(`"${name}"`));
      assert.equal(fx.upstream.hits(), 0);
    });
  }

  test('an unknown parameter with an odd name is refused without echoing it', async () => {
    const res = await page('?%3Cscript%3E=1');
    assert.equal(res.status, 400);
    assert.doesNotMatch(problemOf(res).detail, /script/);
  });

  test('an upstream page that is not {items, total} is a 502', async () => {
    fx.upstream.on('/customers?offset=0&limit=7', { kind: 'json', body: [1, 2] });
    assert.equal((await page('?limit=7')).status, 502);
    fx.upstream.on('/customers?offset=0&limit=8', { kind: 'json', body: { items: [], total: -1 } });
    assert.equal((await page('?limit=8')).status, 502);
    fx.upstream.on('/customers?offset=0&limit=9', { kind: 'json', body: { items: [{ id: 'x', name: 'n', status: 's' }], total: 1 } });
    assert.equal((await page('?limit=9')).status, 502);
    fx.upstream.on('/customers?offset=0&limit=11', { kind: 'json', status: 404, body: {} });
    assert.equal((await page('?limit=11')).status, 502);
  });

  test('the collection needs a token', async () => {
    assert.equal((await get(`${fx.gw.url}/api/customers`)).status, 401);
  });
});
