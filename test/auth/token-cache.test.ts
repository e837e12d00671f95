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

  test('a cached principal keeps only what the gateway reads, and tokens with the same checked scopes share one scope set', async () => {
    const a = await fx.token({ claims: { sub: 'a', scope: 'customers:read extra', email: 'a@example.com' } });
    const b = await fx.token({ claims: { sub: 'b', scp: ['other', 'customers:read'] } });
    for (const t of [a, b]) await fx.gw.gateway.verifier.verify(t);
    const pa = fx.gw.gateway.verifier.cached(a);
    const pb = fx.gw.gateway.verifier.cached(b);
    assert.ok(pa !== undefined && pb !== undefined);
    assert.deepEqual(Object.keys(pa).sort(), ['claims', 'expiresAtMs', 'scopes', 'subject']);
    assert.deepEqual(pa.claims, [], 'no owner rule or forwarded claim is configured: no claim is kept');
    assert.equal(pa.scopes, pb.scopes, 'one shared set');
    assert.deepEqual([...pa.scopes], ['customers:read'], 'scopes no route checks are not kept');
  });

  test('a scope string that spells the JSON of other claims holds no scope it does not name', async () => {
    const split = await fx.token({ claims: { scope: 'customers:read', scp: ['x'] } });
    const literal = await fx.token({ claims: { scope: '["customers:read",["x"]]' } });
    await fx.gw.gateway.verifier.verify(split);
    const p = await fx.gw.gateway.verifier.verify(literal);
    assert.equal(p.scopes.size, 0);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(literal))).status, 403);
  });

  test('a sub that is not a string (RFC 7519 section 4.1.2) counts as no subject', async () => {
    for (const sub of [42, null, ['a']]) {
      const token = await fx.token({ claims: { sub } as Record<string, unknown> });
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
      assert.equal(fx.gw.gateway.verifier.cached(token)?.subject, undefined, JSON.stringify(sub));
    }
  });

  test('a token that shares its signature (the cache key) with a cached one but not its payload is verified, and refused', async () => {
    const token = await fx.token({ claims: { sub: 'reader', scope: 'customers:read' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'admin', scope: 'customers:read customers:read:any' })).toString('base64url')}.${signature}`;
    assert.equal(forged.slice(-16), token.slice(-16));
    assert.equal(fx.gw.gateway.verifier.cached(forged), undefined);
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(forged));
    assert.equal(res.status, 401);
    assert.match(String(res.headers['www-authenticate']), /invalid_token/);
    assert.equal(fx.gw.gateway.verifier.cached(token)?.subject, 'reader', 'the genuine token is still cached');
  });
});
