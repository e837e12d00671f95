import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

// Regression: /api/customers/42/%6frders, o%72ders and 727 other spellings each made their own
// upstream fetch and cache entry, and links.self echoed the odd spelling. find-my-way decodes
// static segments before matching; the resource's template is matched again, byte for byte.
describe('only the canonical spelling of a static segment names a route', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    fx = await startFixture();
    token = await fx.token();
  });
  after(() => fx.close());

  const spellings = [
    '/api/customers/42/%6frders',
    '/api/customers/42/o%72ders',
    '/api/customers/42/%6F%72%64%65%72%73',
    '/api/%63ustomers/42',
    '/api/c%75stomers/42/orders',
    '/api/customers/42/orders/%34201',
    '/api/customers/42/%6frders/4201',
  ];

  for (const path of spellings) {
    test(`${path} is a 404 that never reaches the upstream`, async () => {
      assertProblem(await get(`${fx.gw.url}${path}`, bearer(token)), { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
      assert.equal(fx.upstream.hits(), 0);
      assert.equal(fx.gw.gateway.cache.size, 0);
    });
  }

  // Regression: /%61pi and /api/openapi%2ejson answered as /api and /api/openapi.json: the routes
  // without parameters had no template to match again.
  for (const path of ['/%61pi', '/%61%70%69', '/api/openapi%2ejson', '/api/%6fpenapi.json', '/ap%69/openapi.json']) {
    test(`${path} is a 404 for every method, OPTIONS included`, async () => {
      assertProblem(await get(`${fx.gw.url}${path}`, bearer(token)), { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
      assertProblem(await get(`${fx.gw.url}${path}`, bearer(token), 'POST'), { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
      const options = await get(`${fx.gw.url}${path}`, {}, 'OPTIONS');
      assert.equal(options.status, 404);
      assert.equal(options.headers['allow'], undefined);
      assert.equal(fx.gw.gateway.cache.size, 0);
    });
  }

  test('/api and /api/openapi.json spelled canonically still answer', async () => {
    assert.equal((await get(`${fx.gw.url}/api`, bearer(token))).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/openapi.json`, bearer(token))).status, 200);
    assert.equal((await get(`${fx.gw.url}/api`, {}, 'OPTIONS')).status, 204);
  });

  test('the canonical spelling still answers, with itself as links.self', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42/orders`, bearer(token));
    assert.equal(res.status, 200);
    assert.equal((res.json() as { links: { self: string } }).links.self, '/api/customers/42/orders');
  });
});
