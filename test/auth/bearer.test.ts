import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { base64url, SignJWT } from 'jose';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, parseRaw, problemOf, rawRequest } from '../helpers/gateway.ts';
import { makeKey, signRawEs256, signToken } from '../helpers/keys.ts';

const REALM = 'Bearer realm="hypergate"';

describe('authentication errors (RFC 6750)', () => {
  let fx: Fixture;
  let url: string;
  before(async () => {
    fx = await startFixture();
    url = `${fx.gw.url}/api/customers/1`;
  });
  after(() => fx.close());

  async function expectInvalidToken(token: string, description: RegExp): Promise<void> {
    const res = await get(url, bearer(token));
    assert.equal(res.status, 401);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    const challenge = String(res.headers['www-authenticate']);
    assert.ok(challenge.startsWith(`${REALM}, error="invalid_token"`), challenge);
    assert.match(challenge, description);
    const problem = problemOf(res);
    assert.equal(problem.type, 'urn:hypergate:problem:invalid-token');
    assert.equal(problem.status, 401);
  }

  test('no Authorization header is 401 with a bare Bearer challenge', async () => {
    const res = await get(url);
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], REALM);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(res).code, 'HG_ERR_AUTH_MISSING');
  });

  test('another scheme (Basic) is 401 with a bare Bearer challenge', async () => {
    const res = await get(url, { authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], REALM);
  });

  for (const header of ['Bearer', 'Bearer ', 'Bearer    ', 'Bearer a b', 'Bearer abc$def', 'Bearer ==abc']) {
    test(`a malformed header (${JSON.stringify(header)}) is 400 invalid_request`, async () => {
      const res = await get(url, { authorization: header });
      assert.equal(res.status, 400);
      assert.ok(String(res.headers['www-authenticate']).startsWith(`${REALM}, error="invalid_request"`));
      assert.equal(problemOf(res).code, 'HG_ERR_AUTH_INVALID_REQUEST');
    });
  }

  test('two Authorization headers are 400 invalid_request even if the first is valid', async () => {
    const token = await fx.token();
    const raw = await rawRequest(
      fx.gw.port,
      `GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAuthorization: Bearer other\r\nConnection: close\r\n\r\n`,
    );
    const { status, head, body } = parseRaw(raw);
    assert.equal(status, 400);
    assert.match(head, /WWW-Authenticate: Bearer realm="hypergate", error="invalid_request"/);
    assert.equal((JSON.parse(body) as { code: string }).code, 'HG_ERR_AUTH_INVALID_REQUEST');
  });

  test('a token longer than auth.maxTokenBytes is 400 invalid_request before any parsing', async () => {
    const res = await get(url, bearer('a'.repeat(9000)));
    assert.equal(res.status, 400);
    assert.match(String(res.headers['www-authenticate']), /error="invalid_request"/);
  });

  test('the scheme name is case-insensitive', async () => {
    const res = await get(url, { authorization: `bEaReR ${await fx.token()}` });
    assert.equal(res.status, 200);
  });

  test('a token that is not a JWT is 401 invalid_token', () => expectInvalidToken('not-a-jwt', /malformed/));
  test('an expired token is 401 invalid_token', async () => expectInvalidToken(await fx.token({ expiresIn: -60 }), /expired/));
  test('a token not yet valid is 401 invalid_token', async () =>
    expectInvalidToken(await fx.token({ claims: { nbf: fx.clock.seconds + 600 } }), /not yet valid/));
  test('a token without exp is 401 invalid_token', async () => expectInvalidToken(await fx.token({ omitExp: true }), /exp/));
  test('exp as a string is 401 invalid_token', async () =>
    expectInvalidToken(await fx.token({ claims: { exp: String(fx.clock.seconds + 60) as unknown as number } }), /invalid_token/));
  test('a token signed by another key is 401 invalid_token', async () => {
    const stranger = await makeKey('ES256', fx.key.kid);
    await expectInvalidToken(await signToken(stranger, { nowSeconds: fx.clock.seconds }), /signature/);
  });
  test('a tampered payload is 401 invalid_token', async () => {
    const [h, , s] = (await fx.token()).split('.');
    const payload = base64url.encode(JSON.stringify({ sub: 'admin', scope: 'customers:read', exp: fx.clock.seconds + 60 }));
    await expectInvalidToken(`${h}.${payload}.${s}`, /signature/);
  });
  test('a truncated signature is 401 invalid_token', async () => {
    const token = await fx.token();
    await expectInvalidToken(token.slice(0, -10), /invalid_token/);
  });
  test('alg none is 401 invalid_token', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(JSON.stringify({ sub: 'x', scope: 'customers:read', exp: fx.clock.seconds + 60 }));
    await expectInvalidToken(`${header}.${payload}.`, /invalid_token/);
  });
  test('HS256 signed with the public key as the secret is 401 invalid_token', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(fx.key.publicJwk));
    const token = await new SignJWT({ scope: 'customers:read' })
      .setProtectedHeader({ alg: 'HS256', kid: fx.key.kid })
      .setExpirationTime(fx.clock.seconds + 60)
      .sign(secret);
    await expectInvalidToken(token, /algorithm is not allowed/);
  });
  test('an unknown kid is 401 invalid_token', async () => {
    const other = await makeKey('ES256', 'unknown-kid');
    await expectInvalidToken(await signToken(other, { nowSeconds: fx.clock.seconds }), /no key matches/);
  });
  test('a wrong typ is 401 invalid_token', async () => expectInvalidToken(await fx.token({ header: { typ: 'secevent+jwt' } }), /token type/));
  test('an unknown crit header is 401 invalid_token', async () => {
    const token = await signRawEs256(fx.key, { crit: ['x-unknown'], 'x-unknown': 1 }, { scope: 'customers:read', exp: fx.clock.seconds + 60 });
    await expectInvalidToken(token, /unsupported feature|malformed/);
  });
  test('a correctly signed token with a well-formed crit-free header is accepted (control)', async () => {
    const token = await signRawEs256(fx.key, { typ: 'JWT' }, { scope: 'customers:read', exp: fx.clock.seconds + 60 });
    assert.equal((await get(url, bearer(token))).status, 200);
  });

  test('a token without the required scope is 403 insufficient_scope naming the scope', async () => {
    const res = await get(url, bearer(await fx.token({ claims: { scope: 'orders:read' } })));
    assert.equal(res.status, 403);
    assert.equal(res.headers['www-authenticate'], `${REALM}, error="insufficient_scope", scope="customers:read"`);
    assert.equal(problemOf(res).type, 'urn:hypergate:problem:insufficient-scope');
  });

  test('the scope may come as an scp array', async () => {
    const res = await get(url, bearer(await fx.token({ claims: { scope: undefined, scp: ['profile', 'customers:read'] } })));
    assert.equal(res.status, 200);
  });

  test('a scope that only starts with the required one does not count', async () => {
    const res = await get(url, bearer(await fx.token({ claims: { scope: 'customers:readonly customers' } })));
    assert.equal(res.status, 403);
  });
});

describe('issuer, audience and clock tolerance', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ auth: { issuer: 'https://idp.example', audience: 'hypergate', clockToleranceSeconds: 5 } });
  });
  after(() => fx.close());
  const ok = { iss: 'https://idp.example', aud: 'hypergate' };

  test('a token with the configured issuer and audience is accepted', async () => {
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: ok })))).status, 200);
  });
  test('a wrong issuer is 401 invalid_token', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { ...ok, iss: 'https://evil.example' } })));
    assert.equal(res.status, 401);
    assert.match(String(res.headers['www-authenticate']), /unexpected issuer/);
  });
  test('a wrong audience is 401 invalid_token', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { ...ok, aud: 'someone-else' } })));
    assert.equal(res.status, 401);
    assert.match(String(res.headers['www-authenticate']), /unexpected audience/);
  });
  test('a token expired within the clock tolerance is still accepted', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: ok, expiresIn: -3 })));
    assert.equal(res.status, 200);
  });
  test('a token expired beyond the clock tolerance is rejected', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: ok, expiresIn: -6 })));
    assert.equal(res.status, 401);
  });
});
