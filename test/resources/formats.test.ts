import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

const HAL = { accept: 'application/hal+json' };

describe('representation formats', () => {
  let fx: Fixture;
  let token: string;
  const read = (path: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...bearer(token), ...headers });

  before(async () => {
    fx = await startFixture();
    token = await fx.token();
  });
  after(() => fx.close());

  test('plain JSON keeps the seed customer shape byte for byte', async () => {
    const res = await read('/api/customers/42', { accept: 'application/json' });
    assert.equal(res.text, '{"id":42,"name":"Customer 42","status":"active","links":{"self":"/api/customers/42","orders":"/api/customers/42/orders"}}');
  });

  test('HAL has _links of {href} objects and the same fields', async () => {
    const res = await read('/api/customers/42', HAL);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/hal+json');
    assert.deepEqual(res.json(), {
      _links: { self: { href: '/api/customers/42' }, orders: { href: '/api/customers/42/orders' } },
      id: 42,
      name: 'Customer 42',
      status: 'active',
    });
  });

  test('a HAL collection embeds its items under _embedded', async () => {
    const body = (await read('/api/customers?offset=0&limit=2', HAL)).json() as {
      _links: Record<string, { href: string }>;
      _embedded: { customers: { id: number; _links: { self: { href: string } } }[] };
      total: number;
    };
    assert.equal(body._links['self']?.href, '/api/customers?offset=0&limit=2');
    assert.deepEqual(
      body._embedded.customers.map((c) => c._links.self.href),
      ['/api/customers/1', '/api/customers/2'],
    );
    assert.equal(body.total, 45);
    const orders = (await read('/api/customers/3/orders', HAL)).json() as { _embedded: { orders: { id: number }[] } };
    assert.deepEqual(
      orders._embedded.orders.map((o) => o.id),
      [301, 302],
    );
  });

  test('negotiated answers say Vary: Accept, in 200 and in 304', async () => {
    const ok = await read('/api/customers/43');
    assert.equal(ok.headers['vary'], 'Accept');
    const notModified = await read('/api/customers/43', { 'if-none-match': ok.headers['etag'] as string });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers['vary'], 'Accept');
  });

  test('each format is cached on its own with its own ETag, from one upstream request', async () => {
    fx.upstream.reset();
    const json = await read('/api/customers/44');
    const hal = await read('/api/customers/44', HAL);
    const halAgain = await read('/api/customers/44', HAL);
    assert.notEqual(json.headers['etag'], hal.headers['etag']);
    assert.equal(hal.headers['etag'], halAgain.headers['etag']);
    assert.equal(hal.text, halAgain.text);
    assert.equal(fx.upstream.hits('/customers/44'), 1);
    // A JSON ETag does not validate the HAL body.
    const cross = await read('/api/customers/44', { ...HAL, 'if-none-match': json.headers['etag'] as string });
    assert.equal(cross.status, 200);
  });

  test('q-values pick the format', async () => {
    const res = await read('/api/customers/45', { accept: 'application/json;q=0.5, application/hal+json;q=0.9' });
    assert.equal(res.headers['content-type'], 'application/hal+json');
  });

  test('an Accept nothing offered matches is a 406 problem naming the formats', async () => {
    for (const path of ['/api', '/api/customers', '/api/customers/46', '/api/customers/46/orders', '/api/customers/46/orders/4601']) {
      const res = await read(path, { accept: 'text/html' });
      assert.equal(res.status, 406, path);
      assert.match(problemOf(res).detail, /application\/hal\+json/);
    }
  });

  test('the OpenAPI document is JSON only', async () => {
    const res = await read('/api/openapi.json', HAL);
    assert.equal(res.status, 406);
  });
});
