import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, type HttpAnswer } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import type { UpstreamBehaviour } from '../helpers/upstream.ts';

const MAX_AGE_MS = 60_000;

/** `forwarded`: the request went to the upstream and failed (fwd=stale); else the cache answered alone, a stale hit (RFC 9211). */
function assertStale(res: HttpAnswer, ageSeconds: number, forwarded = true): void {
  assert.equal(res.status, 200);
  assert.equal(res.headers['age'], String(ageSeconds), 'the true Age, above max-age');
  assert.equal(res.headers['cache-control'], 'max-age=60');
  assert.equal(res.headers['cache-status'], `hypergate; ${forwarded ? 'fwd=stale' : 'hit'}; ttl=${60 - ageSeconds}; detail=stale-if-error`);
}

describe('stale-if-error', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  const log = captureLog('debug');
  const read = (path: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...auth, ...headers });

  before(async () => {
    // The breaker is off so that each test meets exactly the fault it sets up.
    fx = await startFixture({ upstream: { timeoutMs: 300, breaker: { failures: 0 } } }, { logger: log.logger });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  const faults: Array<[string, UpstreamBehaviour]> = [
    ['a 500', { kind: 'json', status: 500, body: { error: 'boom' } }],
    ['a reset connection', { kind: 'reset' }],
    ['a time-out', { kind: 'hang' }],
    ['a body that is not JSON', { kind: 'raw', status: 200, body: '{"id":', headers: { 'content-type': 'application/json' } }],
    ['an invalid record', { kind: 'json', body: { id: 'nope' } }],
  ];
  let id = 10;
  for (const [what, behaviour] of faults) {
    const customer = id++;
    test(`${what} after expiry is answered with the expired entry, logged and counted`, async () => {
      const path = `/api/customers/${customer}`;
      const first = await read(path);
      assert.equal(first.status, 200);
      fx.clock.advance(MAX_AGE_MS + 1_000);
      fx.upstream.on(`/customers/${customer}`, behaviour);
      const staleBefore = fx.gw.gateway.metrics.cache.stale;
      const res = await read(path, { 'x-request-id': `stale-${customer}` });
      assertStale(res, 61);
      assert.equal(res.text, first.text);
      assert.equal(res.headers['etag'], first.headers['etag']);
      assert.ok(fx.upstream.hits(`/customers/${customer}`) >= 2, 'the upstream was asked again');
      assert.equal(fx.gw.gateway.metrics.cache.stale, staleBefore + 1);
      const warnings = log.records().filter((r) => r['msg'] === 'served a stale entry: the upstream failed' && r['reqId'] === `stale-${customer}`);
      assert.equal(warnings.length, 1, 'one warning for the request');
      assert.equal(warnings[0]?.['level'], 40);
      assert.equal(typeof warnings[0]?.['cause'], 'string');
      assert.equal(warnings[0]?.['staleSeconds'], 1);
      const access = log.records().find((r) => r['msg'] === 'request' && r['reqId'] === `stale-${customer}`);
      assert.equal(access?.['cache'], 'stale');
    });
  }

  test('the stale counter reaches /metrics', async () => {
    const text = await fx.gw.gateway.metrics.text();
    assert.ok((sample(text, 'hypergate_cache_stale_total') ?? 0) >= faults.length);
  });

  test('up to cache.staleIfErrorSeconds after expiry; past it, the mapped error', async () => {
    await read('/api/customers/30');
    fx.upstream.on('/customers/30', { kind: 'json', status: 503, body: {} });
    fx.clock.advance(MAX_AGE_MS + 299_000);
    assertStale(await read('/api/customers/30'), 359);
    fx.clock.advance(1_000);
    const res = await read('/api/customers/30');
    assert.equal(res.status, 502);
    assert.equal(problemOf(res).code, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
  });

  test('orders, one order, a collection page and the HAL format are served stale too', async () => {
    const paths = ['/api/customers/31/orders', '/api/customers/31/orders/3101', '/api/customers?offset=0&limit=5'];
    const hal = { accept: 'application/hal+json' };
    const firsts = await Promise.all([...paths.map((p) => read(p)), read('/api/customers/32', hal)]);
    assert.ok(firsts.every((r) => r.status === 200));
    fx.clock.advance(MAX_AGE_MS + 5_000);
    fx.upstream.on('*', { kind: 'json', status: 500, body: {} });
    const stale = await Promise.all([...paths.map((p) => read(p)), read('/api/customers/32', hal)]);
    stale.forEach((res, i) => {
      assertStale(res, 65);
      assert.equal(res.text, firsts[i]?.text);
    });
    assert.equal(stale[3]?.headers['content-type'], 'application/hal+json');
  });

  test('a conditional request is answered 304 from a stale entry', async () => {
    const first = await read('/api/customers/33');
    fx.clock.advance(MAX_AGE_MS + 2_000);
    fx.upstream.on('/customers/33', { kind: 'reset' });
    const res = await read('/api/customers/33', { 'if-none-match': first.headers['etag'] as string });
    assert.equal(res.status, 304);
    assert.match(res.headers['cache-status'] as string, /fwd=stale/);
  });

  test('an entry the upstream said is gone is never served stale', async () => {
    await read('/api/customers/34');
    fx.clock.advance(MAX_AGE_MS + 1_000);
    fx.upstream.on('/customers/34', { kind: 'json', status: 404, body: {} });
    assert.equal((await read('/api/customers/34')).status, 404);
    // Past cache.notFoundSeconds, so the next read asks the upstream again.
    fx.clock.advance(6_000);
    fx.upstream.on('/customers/34', { kind: 'json', status: 500, body: {} });
    assert.equal((await read('/api/customers/34')).status, 502);
  });

  test('an upstream must-revalidate or s-maxage forbids serving it stale', async () => {
    fx.upstream.on('/customers/35', { kind: 'json', body: { id: 35, name: 'M', status: 's' }, headers: { 'cache-control': 'max-age=60, must-revalidate' } });
    fx.upstream.on('/customers/36', { kind: 'json', body: { id: 36, name: 'S', status: 's' }, headers: { 'cache-control': 's-maxage=60' } });
    await read('/api/customers/35');
    await read('/api/customers/36');
    fx.clock.advance(MAX_AGE_MS + 1_000);
    for (const n of [35, 36]) fx.upstream.on(`/customers/${n}`, { kind: 'json', status: 500, body: {} });
    assert.equal((await read('/api/customers/35')).status, 502);
    assert.equal((await read('/api/customers/36')).status, 502);
  });

  test('a miss with nothing cached is still the mapped error', async () => {
    fx.upstream.on('/customers/37', { kind: 'json', status: 500, body: {} });
    assert.equal((await read('/api/customers/37')).status, 502);
  });
});

describe('stale-if-error when the upstream is gone or the breaker is open', () => {
  test('a refused connection is answered with the expired entry', async () => {
    const fx = await startFixture();
    try {
      const auth = bearer(await fx.token({ expiresIn: 3600 }));
      const first = await get(`${fx.gw.url}/api/customers/1`, auth);
      await fx.upstream.close();
      fx.clock.advance(MAX_AGE_MS + 10_000);
      const res = await get(`${fx.gw.url}/api/customers/1`, auth);
      assertStale(res, 70);
      assert.equal(res.text, first.text);
      assert.equal((await get(`${fx.gw.url}/api/customers/2`, auth)).status, 502, 'nothing cached: the mapped error');
    } finally {
      await fx.close();
    }
  });

  test('with the breaker open, stale entries are served without asking the upstream and misses get 503', async () => {
    const fx = await startFixture({ upstream: { breaker: { failures: 1, cooldownMs: 60_000 } } });
    try {
      const auth = bearer(await fx.token({ expiresIn: 3600 }));
      await get(`${fx.gw.url}/api/customers/1`, auth);
      fx.clock.advance(MAX_AGE_MS + 1_000);
      fx.upstream.on('*', { kind: 'json', status: 500, body: {} });
      assertStale(await get(`${fx.gw.url}/api/customers/1`, auth), 61);
      const hits = fx.upstream.hits();
      assertStale(await get(`${fx.gw.url}/api/customers/1`, auth), 61, false);
      assert.equal(fx.upstream.hits(), hits, 'the open breaker kept the request from the upstream');
      const miss = await get(`${fx.gw.url}/api/customers/2`, auth);
      assert.equal(miss.status, 503);
      assert.equal(miss.headers['retry-after'], '60');
    } finally {
      await fx.close();
    }
  });

  test('cache.staleIfErrorSeconds: 0 never serves stale', async () => {
    const fx = await startFixture({ cache: { staleIfErrorSeconds: 0 } });
    try {
      const auth = bearer(await fx.token({ expiresIn: 3600 }));
      await get(`${fx.gw.url}/api/customers/1`, auth);
      fx.clock.advance(MAX_AGE_MS);
      fx.upstream.on('*', { kind: 'json', status: 500, body: {} });
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, auth)).status, 502);
    } finally {
      await fx.close();
    }
  });
});
