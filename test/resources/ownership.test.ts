import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('ownership (auth.ownerClaim)', () => {
  let fx: Fixture;
  let own: string;
  let ownAsString: string;
  let reader: string;
  let unbound: string;
  const read = (path: string, token: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...bearer(token), ...headers });

  before(async () => {
    fx = await startFixture({ auth: { ownerClaim: 'customer_id' } });
    own = await fx.token({ claims: { customer_id: 7 } });
    ownAsString = await fx.token({ claims: { customer_id: '8' } });
    reader = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
    unbound = await fx.token();
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('a token reads its own customer, its orders and one of its orders', async () => {
    for (const path of ['/api/customers/7', '/api/customers/7/orders', '/api/customers/7/orders/701']) {
      assert.equal((await read(path, own)).status, 200, path);
    }
    assert.equal((await read('/api/customers/8', ownAsString)).status, 200);
  });

  test('another customer is 403 before any upstream request, whether it exists or not', async () => {
    for (const path of ['/api/customers/9', '/api/customers/9/orders', '/api/customers/9/orders/901', '/api/customers/99999999']) {
      const res = await read(path, own);
      assert.equal(res.status, 403, path);
      const problem = problemOf(res);
      assert.equal(problem.code, 'HG_ERR_NOT_OWNER');
      assert.equal(problem.detail, 'This token may read only its own customer.', 'customers and their orders name the customer, as before');
      assert.match(res.headers['www-authenticate'] as string, /error="insufficient_scope", scope="customers:read:any"/);
    }
    assert.equal(fx.upstream.hits(), 0);
  });

  test('a cached customer is not served to a token that does not own it', async () => {
    assert.equal((await read('/api/customers/7', own)).status, 200);
    assert.equal((await read('/api/customers/7', ownAsString)).status, 403);
    assert.equal((await read('/api/customers/7', ownAsString, { accept: 'application/hal+json' })).status, 403);
  });

  test('a token without the claim reads no customer', async () => {
    assert.equal((await read('/api/customers/7', unbound)).status, 403);
    const odd = await fx.token({ claims: { customer_id: '07' } });
    assert.equal((await read('/api/customers/7', odd)).status, 403);
  });

  test('the read-any scope lifts the rule', async () => {
    assert.equal((await read('/api/customers/9', reader)).status, 200);
    assert.equal((await read('/api/customers/9/orders/901', reader)).status, 200);
  });

  test('the collection needs the read-any scope when ownership is on', async () => {
    const res = await read('/api/customers', own);
    assert.equal(res.status, 403);
    assert.equal(problemOf(res).code, 'HG_ERR_AUTH_INSUFFICIENT_SCOPE');
    assert.match(problemOf(res).detail, /customers:read:any/);
    assert.equal(fx.upstream.hits(), 0);
    assert.equal((await read('/api/customers', reader)).status, 200);
  });

  test('the root and the OpenAPI document stay readable for a bound token', async () => {
    assert.equal((await read('/api', own)).status, 200);
    assert.equal((await read('/api/openapi.json', own)).status, 200);
  });

  test('the first request of a token (not yet cached) is checked the same way', async () => {
    const fresh = await fx.token({ claims: { customer_id: 7, jti: 'another' } });
    assert.equal((await read('/api/customers/9', fresh)).status, 403);
    const freshCollection = await fx.token({ claims: { customer_id: 7, jti: 'yet-another' } });
    assert.equal((await read('/api/customers', freshCollection)).status, 403);
  });
});

describe('ownership off (the default)', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture();
  });
  after(() => fx.close());

  test('any token with the base scope reads any customer and the collection', async () => {
    const token = await fx.token({ claims: { customer_id: 7 } });
    assert.equal((await get(`${fx.gw.url}/api/customers/9`, bearer(token))).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers`, bearer(token))).status, 200);
  });
});
