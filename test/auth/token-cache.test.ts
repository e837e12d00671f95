import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

describe('verified-token cache', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ auth: { tokenCacheMaxEntries: 3, clockToleranceSeconds: 0 } });
  });
  after(() => fx.close());

  test('a verified token is cached by its raw string and served without verifying again', async () => {
    const token = await fx.token();
    assert.equal(fx.gw.gateway.verifier.cached(token), undefined);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    const principal = fx.gw.gateway.verifier.cached(token);
    assert.equal(principal?.subject, 'user-1');
    assert.ok(principal.scopes.has('customers:read'));
    // With the key gone from the JWKS, a fresh verification could not succeed: the cache answers.
    fx.jwks.setKeys([]);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    fx.jwks.setKeys([fx.key.publicJwk]);
  });

  test('a token that failed verification is never cached', async () => {
    const expired = await fx.token({ expiresIn: -10 });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(expired))).status, 401);
    assert.equal(fx.gw.gateway.verifier.cached(expired), undefined);
    const wrongScope = await fx.token({ claims: { scope: 'nothing' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(wrongScope))).status, 403);
    // A valid token with the wrong scope may be cached, but it still gets 403 from the cache.
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(wrongScope))).status, 403);
  });

  test('a cached token stops working at its exp', async () => {
    const token = await fx.token({ expiresIn: 30 });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    fx.clock.advance(29_000);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    fx.clock.advance(1_000);
    assert.equal(fx.gw.gateway.verifier.cached(token), undefined);
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(token));
    assert.equal(res.status, 401);
    assert.match(String(res.headers['www-authenticate']), /expired/);
  });

  test('the cache is bounded by auth.tokenCacheMaxEntries', async () => {
    for (let i = 0; i < 6; i++) {
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { sub: `u${i}` } })))).status, 200);
    }
    assert.equal(fx.gw.gateway.verifier.cachedTokens, 3);
  });
});
