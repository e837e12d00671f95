import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { RateLimiter } from '../../src/auth/rate-limit.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, startGateway, type HttpAnswer } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { sample } from '../helpers/metrics.ts';
import { configWith, validateConfig } from '../../src/gateway/load-config.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const POLICY = '"default";q=3;w=3';

type OpenApiDoc = { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> } | undefined> }>> };

async function customerResponses(url: string, token: string): Promise<Record<string, { headers?: Record<string, unknown> } | undefined>> {
  const doc = (await get(`${url}/api/openapi.json`, bearer(token))).json() as OpenApiDoc;
  return doc.paths['/api/customers/{id}']?.['get']?.responses ?? {};
}

function assertLimited(res: HttpAnswer): void {
  assertProblem(res, { status: 429, code: 'HG_ERR_RATE_LIMITED', headers: { 'retry-after': '1', 'ratelimit-policy': POLICY, ratelimit: '"default";r=0;t=1' } });
  assert.equal(res.headers['www-authenticate'], undefined);
}

describe('rate limiting: a token bucket per subject, per client address without a valid token', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ rateLimit: { requestsPerSecond: 1, burst: 3 } });
  });
  // Every test starts with full buckets: a minute of the injected clock refills them all.
  beforeEach(() => fx.clock.advance(60_000));
  after(() => fx.close());

  const customer = (headers: Record<string, string> = {}): Promise<HttpAnswer> => get(`${fx.gw.url}/api/customers/1`, headers);

  test('a subject gets its burst, then 429 with Retry-After, RateLimit-Policy and RateLimit', async () => {
    const auth = bearer(await fx.token({ claims: { sub: 'burst-user' } }));
    for (let i = 0; i < 3; i++) {
      const ok = await customer(auth);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['ratelimit'], undefined, 'successful answers carry no RateLimit field');
    }
    assertLimited(await customer(auth));
    assertLimited(await customer(auth));
  });

  test('the bucket refills at requestsPerSecond on the injected clock', async () => {
    const auth = bearer(await fx.token({ claims: { sub: 'refill-user' } }));
    for (let i = 0; i < 3; i++) assert.equal((await customer(auth)).status, 200);
    assert.equal((await customer(auth)).status, 429);
    fx.clock.advance(999);
    assert.equal((await customer(auth)).status, 429, 'not a whole token yet');
    fx.clock.advance(1);
    assert.equal((await customer(auth)).status, 200);
    assert.equal((await customer(auth)).status, 429);
    fx.clock.advance(2000);
    assert.equal((await customer(auth)).status, 200);
    assert.equal((await customer(auth)).status, 200);
    assert.equal((await customer(auth)).status, 429);
  });

  test('subjects are limited apart: one over its limit does not slow another', async () => {
    const a = bearer(await fx.token({ claims: { sub: 'user-a' } }));
    const b = bearer(await fx.token({ claims: { sub: 'user-b' } }));
    for (let i = 0; i < 4; i++) await customer(a);
    assertLimited(await customer(a));
    assert.equal((await customer(b)).status, 200);
  });

  test('two tokens of one subject share its bucket', async () => {
    const first = bearer(await fx.token({ claims: { sub: 'two-tokens' } }));
    const second = bearer(await fx.token({ claims: { sub: 'two-tokens', jti: 'second' } }));
    assert.equal((await customer(first)).status, 200);
    assert.equal((await customer(second)).status, 200);
    assert.equal((await customer(first)).status, 200);
    assertLimited(await customer(second));
  });

  test('requests without a valid token are limited per client address: 401 until the burst is used, then 429', async () => {
    const bad = bearer(`${(await fx.token()).slice(0, -4)}AAAA`);
    for (let i = 0; i < 2; i++) {
      const res = await customer(bad);
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
    }
    // No Authorization at all counts against the same address.
    assert.equal((await customer()).status, 401);
    assertLimited(await customer(bad));
    assertLimited(await customer());
    assertLimited(await customer({ authorization: 'Basic dXNlcjpwYXNz' }));
  });

  test('a cached valid token is not held back by failures from its address; a new one is, since verifying it costs crypto', async () => {
    const innocent = bearer(await fx.token({ claims: { sub: 'innocent' } }));
    assert.equal((await customer(innocent)).status, 200);
    fx.clock.advance(60_000);
    for (let i = 0; i < 3; i++) await customer();
    assertLimited(await customer());
    assert.equal((await customer(innocent)).status, 200);
    assertLimited(await customer(bearer(await fx.token({ claims: { sub: 'newcomer' } }))));
  });

  test('forged tokens beyond the burst get 429 before any crypto: the verification count stops growing', async () => {
    const rejected = async (): Promise<number> =>
      sample(await fx.gw.gateway.metrics.text(), 'hypergate_token_verifications_total', { result: 'invalid' }) ?? Number.NaN;
    const before = await rejected();
    for (let i = 0; i < 20; i++) {
      const forged = bearer(`${(await fx.token({ claims: { sub: `forger-${i}` } })).slice(0, -6)}AAAAAA`);
      const res = await customer(forged);
      if (i < 3) assert.equal(res.status, 401);
      else assertLimited(res);
    }
    assert.equal(await rejected(), before + 3, 'only the burst was verified');
  });

  test('a token without the scope counts against its subject (403, then 429)', async () => {
    const auth = bearer(await fx.token({ claims: { sub: 'no-scope', scope: 'other' } }));
    for (let i = 0; i < 3; i++) assert.equal((await customer(auth)).status, 403);
    assertLimited(await customer(auth));
    assert.equal((await customer(bearer(await fx.token({ claims: { sub: 'someone-else' } })))).status, 200);
  });

  test('a reload that leaves rateLimit alone keeps every bucket; a changed rateLimit starts afresh', async () => {
    const auth = bearer(await fx.token({ claims: { sub: 'reloaded' } }));
    for (let i = 0; i < 3; i++) await customer(auth);
    assertLimited(await customer(auth));
    const { gateway } = fx.gw;
    await gateway.reload(validateConfig(mergeConfig(gateway.config, { log: { level: 'silent' } })));
    assertLimited(await customer(auth));
    await gateway.reload(validateConfig(mergeConfig(gateway.config, { rateLimit: { burst: 4 } })));
    assert.equal((await customer(auth)).status, 200);
    await gateway.reload(validateConfig(mergeConfig(gateway.config, { rateLimit: { burst: 3 } })));
  });

  test('the OpenAPI document lists the 429 and its headers', async () => {
    const responses = await customerResponses(fx.gw.url, await fx.token({ claims: { sub: 'reader' } }));
    // Every answer's own headers (Cache-Control, X-Request-Id, Vary) are documented beside the 429's.
    const documented = Object.keys(responses['429']?.headers ?? {});
    for (const name of ['Retry-After', 'RateLimit-Policy', 'RateLimit']) assert.ok(documented.includes(name), `${name} in ${documented.join(', ')}`);
  });

  test('every resource route is limited, not only the customer', async () => {
    const auth = bearer(await fx.token({ claims: { sub: 'walker' } }));
    assert.equal((await get(`${fx.gw.url}/api`, auth)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers?offset=0&limit=2`, auth)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/1/orders`, auth)).status, 200);
    assertLimited(await get(`${fx.gw.url}/api/openapi.json`, auth));
  });
});

describe('rate limiting and a key-source outage', () => {
  test("a 503 because the JWKS cannot be fetched is the gateway's fault: it is not counted against the client", async () => {
    const key = await makeKey();
    // Nothing listens on port 9 of loopback: every JWKS fetch is refused.
    const gw = await startGateway({
      upstream: SOME_UPSTREAM,
      auth: { jwksUrl: 'http://127.0.0.1:9/jwks.json' },
      rateLimit: { requestsPerSecond: 1, burst: 1 },
    });
    try {
      const auth = bearer(await signToken(key));
      for (let i = 0; i < 3; i++) assert.equal((await get(`${gw.url}/api/customers/1`, auth)).status, 503);
    } finally {
      await gw.close();
    }
  });
});

describe('rate limiting off', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture();
  });
  after(() => fx.close());

  test('is the default: many quick requests of one subject all succeed', async () => {
    const auth = bearer(await fx.token());
    for (let i = 0; i < 60; i++) assert.equal((await get(`${fx.gw.url}/api/customers/1`, auth)).status, 200);
  });

  test('the OpenAPI document then has no 429, and still lists the bounds every route has (413, 431)', async () => {
    const responses = await customerResponses(fx.gw.url, await fx.token());
    assert.equal(responses['429'], undefined);
    assert.ok(responses['413'] && responses['431']);
  });

  test('null and 0 both switch it off (no limiter is built at all)', () => {
    const clock = new ManualClock();
    assert.equal(RateLimiter.create(configWith({}).rateLimit, clock), null);
    assert.equal(RateLimiter.create(configWith({ rateLimit: { requestsPerSecond: 0 } }).rateLimit, clock), null);
    assert.notEqual(RateLimiter.create(configWith({ rateLimit: { requestsPerSecond: 5 } }).rateLimit, clock), null);
  });
});

describe('RateLimiter state', () => {
  test('holds at most maxKeys subjects and maxKeys addresses, whatever the number of clients', () => {
    const clock = new ManualClock();
    const limiter = RateLimiter.create({ requestsPerSecond: 1, burst: 1, maxKeys: 50 }, clock) as RateLimiter;
    for (let i = 0; i < 10_000; i++) {
      limiter.take(`subject-${i}`, undefined);
      limiter.take(undefined, `10.0.${i >> 8}.${i & 255}`);
    }
    assert.equal(limiter.size, 100);
  });

  test('the policy window is the time the burst takes to refill, in whole seconds', () => {
    const clock = new ManualClock();
    const over = (burst: number, rate: number): string | undefined => {
      const limiter = RateLimiter.create({ requestsPerSecond: rate, burst, maxKeys: 10 }, clock) as RateLimiter;
      for (let i = 0; i < burst; i++) assert.equal(limiter.take('s', undefined), null);
      return limiter.take('s', undefined)?.headers?.['RateLimit-Policy'];
    };
    assert.equal(over(20, 10), '"default";q=20;w=2');
    assert.equal(over(5, 10), '"default";q=5;w=1');
    assert.equal(over(100, 3), '"default";q=100;w=34');
  });

  test('a clock stepped back takes no tokens away', () => {
    const clock = new ManualClock(1_000_000);
    const limiter = RateLimiter.create({ requestsPerSecond: 1, burst: 2, maxKeys: 10 }, clock) as RateLimiter;
    assert.equal(limiter.take('s', undefined), null);
    clock.advance(-60_000);
    assert.equal(limiter.take('s', undefined), null);
    assert.notEqual(limiter.take('s', undefined), null);
  });
});
