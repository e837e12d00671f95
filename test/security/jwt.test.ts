import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { base64url, exportJWK, SignJWT } from 'jose';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { assertProblem, assertStillServes, CHALLENGE, type ExpectedProblem } from '../helpers/hostile.ts';
import { makeKey, signRawEs256, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'hypergate';

/**
 * Hostile input catalogue, part 3: JWT abuse against a gateway that trusts an ES256 and an RS256
 * key from a real JWKS endpoint and requires an issuer and an audience. The `typ` rule: absent,
 * JWT or at+jwt (RFC 8725 section 3.11, RFC 9068) pass; anything else names another kind of token.
 */
describe('hostile input: JWT abuse', () => {
  const clock = new ManualClock();
  let es: TestKey;
  let rs: TestKey;
  let jwks: JwksServer;
  let upstream: TestUpstream;
  let gw: RunningGateway;
  let good: string;
  /** A server that counts what an attacker's jku/x5u would make us fetch. */
  let lure: Server;
  let lureHits = 0;

  const claims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    sub: 'user-1',
    scope: 'customers:read',
    iss: ISSUER,
    aud: AUDIENCE,
    iat: clock.seconds,
    exp: clock.seconds + 3600,
    ...extra,
  });
  const sign = (key: TestKey, extra: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> =>
    signToken(key, { nowSeconds: clock.seconds, claims: claims(extra), header });
  const enc = (value: unknown): string => base64url.encode(JSON.stringify(value));

  before(async () => {
    es = await makeKey('ES256');
    rs = await makeKey('RS256');
    jwks = await startJwksServer([es.publicJwk, rs.publicJwk]);
    upstream = await startTestUpstream();
    gw = await startGateway({ upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE } }, { clock });
    good = await sign(es);
    lure = createServer((_req, res) => {
      lureHits++;
      res.end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => lure.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    await jwks.close();
    await new Promise((resolve) => lure.close(resolve));
  });

  const invalidToken: ExpectedProblem = { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN', headers: { 'www-authenticate': CHALLENGE.invalidToken } };
  const lureUrl = (): string => `http://127.0.0.1:${(lure.address() as AddressInfo).port}/jwks.json`;

  const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  /** The token with the lowest spare bit of its signature's last character set: same signature bytes. */
  const respell = (token: string): string => {
    const value = BASE64URL.indexOf(token.slice(-1));
    assert.equal(value & 15, 0, 'a canonical ES256 or RS256 signature ends with its four spare bits clear');
    return `${token.slice(0, -1)}${BASE64URL[value | 1] as string}`;
  };
  // [name, how the hostile token is made, what it must get]
  const cases: Array<[string, () => Promise<string> | string, ExpectedProblem]> = [
    ['alg "none" with an empty signature', () => `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims())}.`, invalidToken],
    ['alg "None" (other casing)', () => `${enc({ alg: 'None', typ: 'JWT' })}.${enc(claims())}.`, invalidToken],
    [
      'HS256 signed with the EC public key (JWK) as the HMAC secret',
      () => new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: es.kid }).sign(new TextEncoder().encode(JSON.stringify(es.publicJwk))),
      invalidToken,
    ],
    [
      'HS256 signed with the EC public key (PEM) as the HMAC secret',
      async () => new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: es.kid }).sign(new TextEncoder().encode(await es.publicPem())),
      invalidToken,
    ],
    [
      'HS256 signed with the RSA public key (PEM) as the HMAC secret',
      async () => new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: rs.kid }).sign(new TextEncoder().encode(await rs.publicPem())),
      invalidToken,
    ],
    [
      'a tampered payload (sub and scope changed, signature kept)',
      async () => {
        const [h, , s] = (await sign(es)).split('.');
        return `${h}.${enc(claims({ sub: 'admin', scope: 'customers:read customers:read:any' }))}.${s}`;
      },
      invalidToken,
    ],
    [
      'a tampered header (kid switched to the RSA key)',
      async () => {
        const [, p, s] = (await sign(es)).split('.');
        return `${enc({ alg: 'RS256', kid: rs.kid, typ: 'JWT' })}.${p}.${s}`;
      },
      invalidToken,
    ],
    ['a truncated signature', async () => (await sign(es)).slice(0, -12), invalidToken],
    ['the signature stripped', async () => `${(await sign(es)).split('.').slice(0, 2).join('.')}.`, invalidToken],
    // RFC 7515 section 2: BASE64URL omits the trailing '='; with it, one signed token has many spellings.
    ['a valid token with "==" padding after its signature', async () => `${await sign(es)}==`, invalidToken],
    // The last character of a signature carries spare bits (4 for ES256's 86 characters, 4 for
    // RS256's 342): jose decodes them away, so a value there is another spelling of the same token.
    ['a valid ES256 token with a spare bit of its last character set', async () => respell(await sign(es)), invalidToken],
    ['a valid RS256 token with a spare bit of its last character set', async () => respell(await sign(rs)), invalidToken],
    [
      'the signature of another valid token spliced on',
      async () => {
        const [h, p] = (await sign(es, { sub: 'mallory' })).split('.');
        return `${h}.${p}.${(await sign(es)).split('.')[2]}`;
      },
      invalidToken,
    ],
    ['an unknown kid', async () => sign(await makeKey('ES256', 'nobody-knows-me')), invalidToken],
    ['a kid that is a path traversal', async () => sign(await makeKey('ES256', '../../../etc/passwd')), invalidToken],
    ['another key claiming the trusted kid', async () => sign(await makeKey('ES256', es.kid)), invalidToken],
    [
      'ES512 in the header over an ES256 signature',
      async () => {
        const [, p, s] = (await sign(es)).split('.');
        return `${enc({ alg: 'ES512', kid: es.kid, typ: 'JWT' })}.${p}.${s}`;
      },
      invalidToken,
    ],
    ['a wrong typ (secevent+jwt)', () => sign(es, {}, { typ: 'secevent+jwt' }), invalidToken],
    ['typ JOSE (not a JWT access token)', () => sign(es, {}, { typ: 'JOSE' }), invalidToken],
    ['an unknown critical header', () => signRawEs256(es, { crit: ['x-must-understand'], 'x-must-understand': true }, claims()), invalidToken],
    ['exp in the past beyond the clock tolerance', () => sign(es, { exp: clock.seconds - 60 }), invalidToken],
    ['nbf in the future', () => sign(es, { nbf: clock.seconds + 600 }), invalidToken],
    ['no exp at all', () => signRawEs256(es, { typ: 'JWT' }, { ...claims(), exp: undefined }), invalidToken],
    ['exp as a string', () => signRawEs256(es, { typ: 'JWT' }, claims({ exp: String(clock.seconds + 3600) })), invalidToken],
    ['a wrong issuer', () => sign(es, { iss: 'https://evil.example' }), invalidToken],
    ['no issuer', () => signRawEs256(es, { typ: 'JWT' }, { ...claims(), iss: undefined }), invalidToken],
    ['a wrong audience', () => sign(es, { aud: 'another-api' }), invalidToken],
    ['an audience list without ours', () => sign(es, { aud: ['a', 'b'] }), invalidToken],
    ['a payload that is a JSON array', () => signRawEs256(es, { typ: 'JWT' }, [1, 2, 3] as unknown as Record<string, unknown>), invalidToken],
    ['a header that is not JSON', async () => `${base64url.encode('not json')}.${(await sign(es)).split('.').slice(1).join('.')}`, invalidToken],
    ['five segments (a JWE shape)', () => `${enc({ alg: 'RSA-OAEP', enc: 'A256GCM' })}.a.b.c.d`, invalidToken],
    [
      "an embedded jwk header naming the attacker's own key",
      async () => {
        const attacker = await makeKey('ES256');
        return sign(attacker, {}, { kid: undefined, jwk: await exportJWK(attacker.publicKey) });
      },
      invalidToken,
    ],
    [
      "a jku header pointing at the attacker's key set",
      async () => sign(await makeKey('ES256', 'lured'), {}, { jku: lureUrl(), x5u: lureUrl() }),
      invalidToken,
    ],
    [
      'a valid token without the required scope',
      () => sign(es, { scope: 'profile' }),
      { status: 403, code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE', headers: { 'www-authenticate': CHALLENGE.insufficientScope } },
    ],
    [
      'a token with 10,000 claims (refused by size before any parsing)',
      () => signRawEs256(es, { typ: 'JWT' }, { ...claims(), ...Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`c${i}`, i])) }),
      { status: 431, code: 'HG_ERR_HEADERS_TOO_LARGE' },
    ],
  ];
  for (const [name, make, expected] of cases) {
    test(`${name}: ${expected.status} ${expected.code}`, async () => {
      assertProblem(await get(`${gw.url}/api/customers/1`, bearer(await make())), expected);
      await assertStillServes(gw.url, good);
    });
  }

  test('the control: a token from each trusted key, with issuer and audience, is accepted', async () => {
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(good))).status, 200);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await sign(rs)))).status, 200);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await sign(es, { exp: clock.seconds - 3 })))).status, 200, 'expired within the 5 s tolerance');
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await sign(es, {}, { typ: 'at+jwt' })))).status, 200);
  });

  test('no jku or x5u was ever fetched', () => {
    assert.equal(lureHits, 0);
  });
});
