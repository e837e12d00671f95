import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

describe('response cache', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture({ cache: { maxEntries: 3 } });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('two reads of one customer make one upstream request', async () => {
    const a = await get(`${fx.gw.url}/api/customers/100`, auth);
    const b = await get(`${fx.gw.url}/api/customers/100`, auth);
    assert.equal(a.text, b.text);
    assert.equal(a.headers['etag'], b.headers['etag']);
    assert.equal(fx.upstream.hits('/customers/100'), 1);
  });

  test('100 concurrent misses for one id make one upstream request', async () => {
    fx.upstream.on('/customers/101', { kind: 'delay', ms: 100, then: { kind: 'json', body: { id: 101, name: 'Slow', status: 'active' } } });
    const answers = await Promise.all(Array.from({ length: 100 }, () => get(`${fx.gw.url}/api/customers/101`, auth)));
    assert.ok(answers.every((r) => r.status === 200 && (r.json() as { name: string }).name === 'Slow'));
    assert.equal(fx.upstream.hits('/customers/101'), 1);
  });

  test('a body with characters past ASCII is sent as UTF-8 with its byte length, on the miss and on the hit', async () => {
    const name = 'Jos\u00e9 \u00d8stergaard \u{1F600}';
    fx.upstream.on('/customers/105', { kind: 'json', body: { id: 105, name, status: 'active' } });
    for (const outcome of ['miss', 'hit']) {
      const res = await get(`${fx.gw.url}/api/customers/105`, auth);
      assert.equal(res.status, 200, outcome);
      assert.match(String(res.headers['cache-status']), outcome === 'miss' ? /fwd=miss/ : /; hit/);
      assert.equal((res.json() as { name: string }).name, name, outcome);
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text), outcome);
    }
    assert.equal(fx.upstream.hits('/customers/105'), 1);
  });

  test('Age counts whole seconds in the cache, and an expired entry is fetched again', async () => {
    await get(`${fx.gw.url}/api/customers/102`, auth);
    fx.clock.advance(10_500);
    assert.equal((await get(`${fx.gw.url}/api/customers/102`, auth)).headers['age'], '10');
    fx.clock.advance(49_000);
    assert.equal((await get(`${fx.gw.url}/api/customers/102`, auth)).headers['age'], '59');
    assert.equal(fx.upstream.hits('/customers/102'), 1);
    fx.clock.advance(1_000);
    const fresh = await get(`${fx.gw.url}/api/customers/102`, auth);
    assert.equal(fresh.headers['age'], '0');
    assert.equal(fx.upstream.hits('/customers/102'), 2);
  });

  test('a failed fetch is shared by its waiters and not cached', async () => {
    fx.upstream.on('/customers/103', { kind: 'delay', ms: 100, then: { kind: 'json', status: 500, body: { error: 'boom' } } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(`${fx.gw.url}/api/customers/103`, auth)));
    assert.ok(answers.every((r) => r.status === 502));
    assert.equal(fx.upstream.hits('/customers/103'), 1);
    fx.upstream.reset();
    assert.equal((await get(`${fx.gw.url}/api/customers/103`, auth)).status, 200);
    assert.equal(fx.upstream.hits('/customers/103'), 1);
  });

  test('upstream Cache-Control: no-store is not cached and is passed on', async () => {
    fx.upstream.on('/customers/104', { kind: 'json', body: { id: 104, name: 'N', status: 's' }, headers: { 'cache-control': 'no-store' } });
    const res = await get(`${fx.gw.url}/api/customers/104`, auth);
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    await get(`${fx.gw.url}/api/customers/104`, auth);
    assert.equal(fx.upstream.hits('/customers/104'), 2);
  });

  test('upstream Cache-Control: private is not cached by this shared cache', async () => {
    fx.upstream.on('/customers/108', { kind: 'json', body: { id: 108, name: 'N', status: 's' }, headers: { 'cache-control': 'private, max-age=600' } });
    await get(`${fx.gw.url}/api/customers/108`, auth);
    await get(`${fx.gw.url}/api/customers/108`, auth);
    assert.equal(fx.upstream.hits('/customers/108'), 2);
  });

  test('an upstream max-age shorter than ours caps the lifetime and the advertised max-age', async () => {
    fx.upstream.on('/customers/105', { kind: 'json', body: { id: 105, name: 'N', status: 's' }, headers: { 'cache-control': 'max-age=5' } });
    const res = await get(`${fx.gw.url}/api/customers/105`, auth);
    assert.equal(res.headers['cache-control'], 'max-age=5');
    fx.clock.advance(4_000);
    await get(`${fx.gw.url}/api/customers/105`, auth);
    assert.equal(fx.upstream.hits('/customers/105'), 1);
    fx.clock.advance(1_000);
    await get(`${fx.gw.url}/api/customers/105`, auth);
    assert.equal(fx.upstream.hits('/customers/105'), 2);
  });

  test('an upstream max-age longer than ours does not extend our lifetime', async () => {
    fx.upstream.on('/customers/106', { kind: 'json', body: { id: 106, name: 'N', status: 's' }, headers: { 'cache-control': 'max-age=3600' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/106`, auth)).headers['cache-control'], 'max-age=60');
    fx.clock.advance(60_000);
    await get(`${fx.gw.url}/api/customers/106`, auth);
    assert.equal(fx.upstream.hits('/customers/106'), 2);
  });

  test('an upstream Age is counted in our Age and freshness', async () => {
    fx.upstream.on('/customers/107', { kind: 'json', body: { id: 107, name: 'N', status: 's' }, headers: { age: '50' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/107`, auth)).headers['age'], '50');
    fx.clock.advance(10_000);
    await get(`${fx.gw.url}/api/customers/107`, auth);
    assert.equal(fx.upstream.hits('/customers/107'), 2);
  });

  test('the cache is bounded by cache.maxEntries, evicting the least recently used', async () => {
    for (const id of [201, 202, 203, 204]) await get(`${fx.gw.url}/api/customers/${id}`, auth);
    assert.equal(fx.gw.gateway.cache.size, 3);
    await get(`${fx.gw.url}/api/customers/204`, auth);
    assert.equal(fx.upstream.hits('/customers/204'), 1);
    await get(`${fx.gw.url}/api/customers/201`, auth);
    assert.equal(fx.upstream.hits('/customers/201'), 2, 'the oldest entry was evicted');
  });
});

describe('cache.maxAgeSeconds', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ cache: { maxAgeSeconds: 10 } });
  });
  after(() => fx.close());

  test('sets the advertised max-age and the entry lifetime', async () => {
    const auth = bearer(await fx.token({ expiresIn: 3600 }));
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, auth)).headers['cache-control'], 'max-age=10');
    fx.clock.advance(10_000);
    await get(`${fx.gw.url}/api/customers/1`, auth);
    assert.equal(fx.upstream.hits('/customers/1'), 2);
  });
});
