import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('GET /api', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    fx = await startFixture();
    token = await fx.token();
  });
  after(() => fx.close());

  test('the root links to itself, the collection, the customer template and the OpenAPI document', async () => {
    const res = await get(`${fx.gw.url}/api`, bearer(token));
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'max-age=60');
    assert.deepEqual(res.json(), {
      links: {
        self: '/api',
        customers: '/api/customers',
        customer: { href: '/api/customers/{id}', templated: true },
        describedby: '/api/openapi.json',
      },
    });
  });

  test('the root in HAL has the same links as {href} objects', async () => {
    const res = await get(`${fx.gw.url}/api`, { ...bearer(token), accept: 'application/hal+json' });
    assert.equal(res.headers['content-type'], 'application/hal+json');
    assert.deepEqual(res.json(), {
      _links: {
        self: { href: '/api' },
        customers: { href: '/api/customers' },
        customer: { href: '/api/customers/{id}', templated: true },
        describedby: { href: '/api/openapi.json' },
      },
    });
  });

  test('the root needs a token like every other route and never asks the upstream', async () => {
    const res = await get(`${fx.gw.url}/api`);
    assert.equal(res.status, 401);
    assert.equal(problemOf(res).code, 'HG_ERR_AUTH_MISSING');
    const wrongScope = await fx.token({ claims: { scope: 'orders:write' } });
    assert.equal((await get(`${fx.gw.url}/api`, bearer(wrongScope))).status, 403);
    assert.equal(fx.upstream.hits(), 0);
  });

  test('HEAD /api answers the headers of GET without a body', async () => {
    const res = await get(`${fx.gw.url}/api`, bearer(token), 'HEAD');
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    assert.ok(Number(res.headers['content-length']) > 0);
  });

  test('a POST to the root is 405 with Allow: GET, HEAD', async () => {
    const res = await get(`${fx.gw.url}/api`, bearer(token), 'POST');
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, HEAD');
  });
});
