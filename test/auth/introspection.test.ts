import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { basicCredentials } from '../../src/auth/introspection-call.ts';
import { isOpaqueToken } from '../../src/auth/introspection.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { startIntrospectionServer, type IntrospectionServer } from '../helpers/introspection-server.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';

// The client credentials come from the environment, as the config names them.
process.env['HG_TEST_INTROSPECTION_ID'] = 'gateway';
process.env['HG_TEST_INTROSPECTION_SECRET'] = 's3cret:with space';

const CREDENTIALS = { clientId: { env: 'HG_TEST_INTROSPECTION_ID' }, clientSecret: { env: 'HG_TEST_INTROSPECTION_SECRET' } };

/** An opaque token (no dots: never a JWT), unique per test. */
let serial = 0;
const opaque = (): string => `opaque-${++serial}-${'x'.repeat(24)}`;

describe('opaque tokens by introspection (RFC 7662)', () => {
  let idp: IntrospectionServer;
  let fx: Fixture;
  before(async () => {
    idp = await startIntrospectionServer();
    fx = await startFixture({
      auth: {
        ownerClaim: 'customer_id',
        introspection: {
          url: idp.url,
          ...CREDENTIALS,
          timeoutMs: 2000,
          maxCacheSeconds: 60,
          inactiveCacheSeconds: 10,
          planField: 'plan',
          breaker: { failures: 0 },
        },
      },
      upstream: { forwardClaims: { 'X-Customer': 'customer_id' } },
    });
  });
  after(async () => {
    await fx.close();
    await idp.close();
  });
  beforeEach(() => {
    idp.mode = { kind: 'answer' };
  });

  /** An active answer for a new token, valid for `ttl` seconds at the fixture clock's time. */
  const activeToken = (fields: Record<string, unknown> = {}, ttl = 600): string => {
    const token = opaque();
    idp.answer(token, {
      active: true,
      sub: 'alice',
      client_id: 'shop-app',
      scope: 'customers:read other',
      customer_id: 1,
      exp: fx.clock.seconds + ttl,
      ...fields,
    });
    return token;
  };
  const metric = async (name: string, labels: Record<string, string>): Promise<number> => sample(await fx.gw.gateway.metrics.text(), name, labels) ?? 0;

  test('an active token is a principal: its subject, kept scopes, claims, client and plan; asked with the client credentials, form-encoded', async () => {
    const token = activeToken({ plan: 'gold' });
    const calls = idp.calls.length;
    const answer = await get(`${fx.gw.url}/api/customers/1`, bearer(token));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(idp.calls.length, calls + 1);
    const call = idp.calls.at(-1);
    assert.equal(call?.contentType, 'application/x-www-form-urlencoded');
    assert.equal(call?.form.get('token'), token);
    assert.equal(call?.form.get('token_type_hint'), 'access_token');
    // RFC 6749 section 2.3.1: each part form-encoded, then joined with ':' and base64-encoded.
    assert.equal(call?.authorization, `Basic ${Buffer.from('gateway:s3cret%3Awith+space').toString('base64')}`);
    const principal = fx.gw.gateway.verifier.cached(token);
    assert.equal(principal?.subject, 'alice');
    assert.equal(principal.scheme, 'introspection');
    assert.equal(principal.consumer, 'shop-app');
    assert.equal(principal.plan, 'gold');
    assert.deepEqual([...principal.scopes], ['customers:read'], 'only the scopes the gateway checks are kept');
  });

  test('a plan field longer than a plan name (64 characters) names no plan', async () => {
    const token = activeToken({ plan: 'p'.repeat(65) });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    assert.equal(fx.gw.gateway.verifier.cached(token)?.plan, undefined);
  });

  test('a token issued to a client on its own behalf (no sub) has its client_id as subject', async () => {
    const token = activeToken({ sub: undefined, client_id: 'batch-job' });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    assert.equal(fx.gw.gateway.verifier.cached(token)?.subject, 'batch-job');
  });

  test('an active answer is cached: the next requests make no call', async () => {
    const token = activeToken();
    const calls = idp.calls.length;
    const hits = await metric('hypergate_introspection_cache_hits_total', { answer: 'active' });
    for (let i = 0; i < 3; i++) assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    assert.equal(idp.calls.length, calls + 1);
    assert.equal(await metric('hypergate_introspection_cache_hits_total', { answer: 'active' }), hits + 2);
    assert.ok((await metric('hypergate_authentications_total', { scheme: 'introspection', result: 'ok' })) >= 3);
  });

  test("the cached answer lasts until the earlier of the token's exp and maxCacheSeconds (injected clock)", async () => {
    const shortLived = activeToken({}, 30);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(shortLived))).status, 200);
    fx.clock.advance(29_000);
    assert.notEqual(fx.gw.gateway.verifier.cached(shortLived), undefined);
    fx.clock.advance(1_000);
    assert.equal(fx.gw.gateway.verifier.cached(shortLived), undefined, 'gone at its exp');

    const longLived = activeToken({}, 3600);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(longLived))).status, 200);
    fx.clock.advance(59_000);
    assert.notEqual(fx.gw.gateway.verifier.cached(longLived), undefined);
    fx.clock.advance(1_000);
    assert.equal(fx.gw.gateway.verifier.cached(longLived), undefined, 'gone after maxCacheSeconds');
    const calls = idp.calls.length;
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(longLived))).status, 200);
    assert.equal(idp.calls.length, calls + 1, 'asked again');
  });

  test('an inactive token is a 401 invalid_token, and is answered from the cache for inactiveCacheSeconds', async () => {
    const token = opaque();
    const calls = idp.calls.length;
    for (let i = 0; i < 3; i++) {
      const answer = await get(`${fx.gw.url}/api/customers/1`, bearer(token));
      assert.equal(answer.status, 401);
      assert.match(String(answer.headers['www-authenticate']), /error="invalid_token"/);
    }
    assert.equal(idp.calls.length, calls + 1, 'one call for three requests');
    fx.clock.advance(10_000);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 401);
    assert.equal(idp.calls.length, calls + 2, 'asked again once the inactive answer expired');
  });

  test('an answer that says active for a token past its exp is not believed', async () => {
    const token = activeToken({}, -60);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 401);
  });

  test('owner rules and forwardClaims read the introspected claims', async () => {
    const token = activeToken({ customer_id: 7 });
    const own = await get(`${fx.gw.url}/api/customers/7`, bearer(token));
    assert.equal(own.status, 200, own.text);
    const at = fx.upstream.paths.lastIndexOf('/customers/7');
    assert.equal(fx.upstream.headersSeen[at]?.['x-customer'], '7');
    const other = await get(`${fx.gw.url}/api/customers/8`, bearer(token));
    assert.equal(other.status, 403);
    assert.equal(problemOf(other).code, 'HG_ERR_NOT_OWNER');
  });

  test('100 concurrent requests with one new token make one call', async () => {
    const token = activeToken({ customer_id: 2 });
    const calls = idp.calls.length;
    idp.mode = { kind: 'hold' };
    const answers = Array.from({ length: 100 }, () => get(`${fx.gw.url}/api/customers/2`, bearer(token)));
    await waitFor(() => fx.gw.gateway.metrics.inFlight === 100, '100 requests in flight');
    idp.release();
    assert.deepEqual(new Set((await Promise.all(answers)).map((a) => a.status)), new Set([200]));
    assert.equal(idp.calls.length, calls + 1);
  });

  test('a slow endpoint: past timeoutMs (2 s here) the answer is 503 with Retry-After, never 401', async () => {
    idp.mode = { kind: 'silent' };
    const answer = await get(`${fx.gw.url}/api/customers/1`, bearer(opaque()));
    assert.equal(answer.status, 503);
    assert.equal(problemOf(answer).code, 'HG_ERR_AUTH_INTROSPECTION_UNAVAILABLE');
    assert.ok(Number(answer.headers['retry-after']) >= 1);
    assert.ok((await metric('hypergate_introspection_calls_total', { result: 'timeout' })) >= 1);
  });

  test('a malformed answer (not JSON, no boolean active, a 5xx) is the endpoint failing: 503, never 401, never a principal', async () => {
    const modes = [
      { kind: 'raw', body: '<html>login</html>' },
      { kind: 'raw', body: '{"active":"true","sub":"mallory","scope":"customers:read"}' },
      { kind: 'raw', body: '[true]' },
      { kind: 'status', status: 500 },
    ] as const;
    for (const mode of modes) {
      idp.mode = mode;
      const token = opaque();
      const answer = await get(`${fx.gw.url}/api/customers/1`, bearer(token));
      assert.equal(answer.status, 503, JSON.stringify(mode));
      assert.ok(answer.headers['retry-after'] !== undefined);
      assert.equal(fx.gw.gateway.verifier.cached(token), undefined);
    }
    assert.ok((await metric('hypergate_introspection_calls_total', { result: 'malformed' })) >= 3);
    assert.ok((await metric('hypergate_introspection_calls_total', { result: 'http_status' })) >= 1);
  });

  test('the OpenAPI document says authorized operations may answer 503 introspection-unavailable', async () => {
    const answer = await get(`${fx.gw.url}/api/openapi.json`, bearer(activeToken()));
    assert.equal(answer.status, 200);
    assert.ok(answer.text.includes('introspection-unavailable'));
    assert.ok(answer.text.includes('an opaque token the identity provider introspects'));
  });

  test('JWTs are verified as before and never sent to the endpoint', async () => {
    const calls = idp.calls.length;
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token({ claims: { customer_id: 1 } })))).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(`${(await fx.token()).slice(0, -6)}AAAAAA`))).status, 401);
    assert.equal(idp.calls.length, calls);
  });
});

describe('an introspection endpoint that is down', () => {
  let fx: Fixture;
  let log: CapturedLog;
  before(async () => {
    log = captureLog();
    // Nothing listens on port 9: every call is refused.
    fx = await startFixture(
      {
        auth: { introspection: { url: 'http://127.0.0.1:9/introspect', ...CREDENTIALS, breaker: { failures: 3, cooldownMs: 30_000 } } },
        rateLimit: { requestsPerSecond: 1, burst: 2 },
      },
      { logger: log.logger },
    );
  });
  after(() => fx.close());

  test('answers 503 with Retry-After (never 401), charges nothing to the address, and its breaker stops the calls', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) {
      tokens.push(opaque());
      const answer = await get(`${fx.gw.url}/api/customers/1`, bearer(tokens[i] as string));
      assert.equal(answer.status, 503, answer.text);
      assert.ok(Number(answer.headers['retry-after']) >= 1);
    }
    const text = await fx.gw.gateway.metrics.text();
    assert.equal(sample(text, 'hypergate_introspection_calls_total', { result: 'refused' }), 3);
    assert.equal(sample(text, 'hypergate_introspection_breaker_open_total'), 3);
    assert.equal(sample(text, 'hypergate_authentications_total', { scheme: 'introspection', result: 'unavailable' }), 6);
    // One warning for the three failed calls (the clock stood still), naming the endpoint, never a token or the secret.
    const warnings = log.records().filter((r) => r['event'] === 'introspection');
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]?.['url'], 'http://127.0.0.1:9/introspect');
    assert.equal(warnings[0]?.['result'], 'refused');
    for (const line of log.lines) {
      for (const token of tokens) assert.equal(line.includes(token), false, line);
      assert.equal(line.includes('s3cret'), false, line);
    }
    // The address's budget (a burst of 2) is untouched: two bad tokens are still 401, the third 429.
    const bad = `${(await fx.token()).slice(0, -6)}AAAAAA`;
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(bad))).status, 401);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(bad))).status, 401);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(bad))).status, 429);
  });
});

describe('which bearer tokens are opaque', () => {
  test('a JWS compact serialization is a JWT; anything else goes to the introspection endpoint', async () => {
    const jwt = await signToken(await makeKey('ES256'), {});
    assert.equal(isOpaqueToken(jwt), false);
    assert.equal(isOpaqueToken(`${jwt.slice(0, jwt.lastIndexOf('.'))}.`), false, 'a JWS with a bad signature is still a JWT (401)');
    for (const token of ['2YotnFZFEjr1zCsicMWpAA', 'a.b', 'abc.def.ghi', `${jwt}.extra`, 'x..y', 'bm90IGpzb24.e30.c2ln']) {
      assert.equal(isOpaqueToken(token), true, token);
    }
  });

  test('client credentials are form-encoded before Basic (RFC 6749 section 2.3.1)', () => {
    assert.equal(basicCredentials('client', 'secret'), `Basic ${Buffer.from('client:secret').toString('base64')}`);
    assert.equal(basicCredentials('a:b', 'é ü'), `Basic ${Buffer.from('a%3Ab:%C3%A9+%C3%BC').toString('base64')}`);
  });
});
