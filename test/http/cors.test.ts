import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { configProblems } from '../helpers/config.ts';
import { bearer, get } from '../helpers/gateway.ts';

const APP = 'https://app.example.com';

function preflight(origin: string): Record<string, string> {
  return { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' };
}

describe('CORS with an allow-list', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    fx = await startFixture({ cors: { origins: [APP] } });
    token = await fx.token();
  });
  after(() => fx.close());

  test('a preflight from an allowed origin gets the methods, Authorization and a max age', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, preflight(APP), 'OPTIONS');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, PUT, PATCH, DELETE');
    assert.match(res.headers['access-control-allow-headers'] as string, /\bAuthorization\b/);
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.equal(res.headers['vary'], 'Origin');
    assert.equal(fx.upstream.hits(), 0);
  });

  test('an allowed origin can read the caching fields, the request id and when to retry, and the answer varies on Accept and Origin', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, { ...bearer(token), origin: APP });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.headers['access-control-expose-headers'], 'ETag, Cache-Status, Age, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location');
    assert.equal(res.headers['vary'], 'Accept, Origin');
    // The cache hit carries the same CORS headers.
    const hit = await get(`${fx.gw.url}/api/customers/42`, { ...bearer(token), origin: APP });
    assert.equal(hit.headers['access-control-allow-origin'], APP);
    assert.equal(hit.headers['vary'], 'Accept, Origin');
  });

  test('problems carry CORS headers too, so a browser can read them', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, { origin: APP });
    assert.equal(res.status, 401);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.headers['vary'], 'Origin');
  });

  test('another origin gets no CORS headers, and its preflight is not answered as one', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, { ...bearer(token), origin: 'https://evil.example' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const pre = await get(`${fx.gw.url}/api/customers/42`, preflight('https://evil.example'), 'OPTIONS');
    // Answered as any OPTIONS (RFC 9110 section 9.3.7), without a CORS grant.
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(pre.headers['vary'], 'Origin');
  });

  test('a preflight for an unknown path is the ordinary 404', async () => {
    const res = await get(`${fx.gw.url}/nowhere`, preflight(APP), 'OPTIONS');
    assert.equal(res.status, 404);
  });

  test('a preflight for a path whose id does not fit its type is the 404 its GET gets, with no methods granted', async () => {
    for (const path of ['/api/customers/abc', '/api/customers/0', '/api/customers/1/orders/x']) {
      const res = await get(`${fx.gw.url}${path}`, preflight(APP), 'OPTIONS');
      assert.equal(res.status, 404, path);
      assert.equal(res.headers['access-control-allow-methods'], undefined, path);
    }
  });
});

describe('CORS with "*"', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ cors: { origins: ['*'], maxAgeSeconds: 5 } });
  });
  after(() => fx.close());

  test('any origin is echoed (never a literal *), with Vary: Origin', async () => {
    const res = await get(`${fx.gw.url}/api`, preflight('http://localhost:3000'), 'OPTIONS');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'http://localhost:3000');
    assert.equal(res.headers['access-control-max-age'], '5');
  });
});

describe('CORS off (the default)', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture();
  });
  after(() => fx.close());

  test('no CORS headers, no Vary: Origin, and OPTIONS is answered as any OPTIONS, with no CORS grant', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, { ...bearer(await fx.token()), origin: APP });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['vary'], 'Accept');
    const pre = await get(`${fx.gw.url}/api/customers/42`, preflight(APP), 'OPTIONS');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(pre.headers['access-control-allow-methods'], undefined);
  });
});

describe('CORS with cors.exposeHeaders and cors.allowHeaders', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ cors: { origins: [APP], exposeHeaders: ['X-Trace', 'etag'], allowHeaders: ['X-Request-Id', 'authorization'] } });
  });
  after(() => fx.close());

  test('cors.exposeHeaders adds to the exposed defaults, each name once', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, { ...bearer(await fx.token()), origin: APP });
    assert.equal(
      res.headers['access-control-expose-headers'],
      'ETag, Cache-Status, Age, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location, X-Trace',
    );
  });

  test('cors.allowHeaders adds to the headers a preflight allows, each name once', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, preflight(APP), 'OPTIONS');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-headers'], 'Authorization, Accept, If-None-Match, Content-Type, If-Match, Idempotency-Key, X-Request-Id');
  });
});

describe('CORS header lists in the config', () => {
  test('are header names (HTTP tokens); anything else stops the start naming the key', () => {
    assert.deepEqual(configProblems({ cors: { exposeHeaders: ['X-Trace', 'a.b_c~d'], allowHeaders: ['X-Request-Id'] } }), []);
    for (const key of ['exposeHeaders', 'allowHeaders']) {
      for (const bad of ['X Trace', 'X-Trace:', 'Über', 'a,b', '(x)']) {
        const problems = configProblems({ cors: { [key]: [bad] } });
        assert.ok(
          problems.some((p) => p.startsWith(`cors.${key}: ${JSON.stringify(bad)}`)),
          `${key} ${bad}: ${problems.join('; ')}`,
        );
      }
    }
  });
});
