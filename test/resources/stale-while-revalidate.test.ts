import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';
import { gate, waitFor } from '../helpers/wait.ts';

const MAX_AGE_MS = 60_000;

describe('stale-while-revalidate', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  const log = captureLog('debug');
  const records = log.records;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  const read = (id: number) => get(`${fx.gw.url}/api/customers/${id}`, auth);
  const name = (res: { json(): unknown }) => (res.json() as { name: string }).name;
  const freshIn = (id: number) => (fx.gw.gateway.cache.get(`/api/customers/${id}`)?.expiresAtMs ?? 0) > fx.clock.now();

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    fx = await startFixture({ cache: { staleWhileRevalidateSeconds: 30 } }, { logger: log.logger });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(() => fx.upstream.reset());
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await fx.close();
  });

  test('within the window an expired entry answers at once while one background request refreshes it', async () => {
    await read(1);
    fx.clock.advance(MAX_AGE_MS + 1_000);
    const held = gate();
    fx.upstream.reset();
    fx.upstream.on('/customers/1', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 1, name: 'Renamed', status: 'active' } } });
    // The upstream holds its answer, yet every request is answered: from the stale entry.
    const answers = await Promise.all(Array.from({ length: 20 }, () => read(1)));
    for (const res of answers) {
      assert.equal(res.status, 200);
      assert.equal(name(res), 'Customer 1');
      assert.equal(res.headers['age'], '61');
      // RFC 9211: this request did not go forward (the refresh is another request), so it is a stale hit, not fwd=stale.
      assert.equal(res.headers['cache-status'], 'hypergate; hit; ttl=-1; detail=stale-while-revalidate');
    }
    assert.equal(fx.upstream.hits('/customers/1'), 1, 'one refresh for the key');
    held.open();
    await waitFor(() => freshIn(1), 'the refresh to be stored');
    const after = await read(1);
    assert.equal(name(after), 'Renamed');
    assert.equal(after.headers['age'], '0');
    assert.match(after.headers['cache-status'] as string, /; hit;/);
    assert.equal(fx.upstream.hits('/customers/1'), 1);
  });

  test('a failed background refresh is logged, crashes nothing, and the entry keeps answering', async () => {
    await read(2);
    fx.clock.advance(MAX_AGE_MS + 1_000);
    fx.upstream.on('/customers/2', { kind: 'json', status: 500, body: {} });
    const res = await read(2);
    assert.equal(res.status, 200);
    assert.match(res.headers['cache-status'] as string, /detail=stale-while-revalidate/);
    await waitFor(() => records().some((r) => r['msg'] === 'background refresh failed' && r['path'] === '/api/customers/2'), 'the failure to be logged');
    const line = records().find((r) => r['msg'] === 'background refresh failed');
    assert.equal(line?.['level'], 40);
    assert.equal(line?.['code'], 'HG_ERR_UPSTREAM_BAD_GATEWAY');
    assert.equal((await read(2)).status, 200, 'still answered from the stale entry');
    await waitFor(
      () => fx.upstream.active() === 0 && records().filter((r) => r['msg'] === 'background refresh failed').length >= 2,
      'the second refresh to settle',
    );
    assert.equal(fx.upstream.hits('/customers/2'), 3, 'the first load, then one refresh per request after a failure');
    assert.deepEqual(unhandled, []);
  });

  test('a background refresh that finds the resource gone drops the entry', async () => {
    await read(3);
    fx.clock.advance(MAX_AGE_MS + 1_000);
    fx.upstream.on('/customers/3', { kind: 'json', status: 404, body: {} });
    assert.equal((await read(3)).status, 200);
    // Dropped: nothing, or the cached absence (cache.notFoundSeconds) in its place.
    await waitFor(() => fx.gw.gateway.cache.get('/api/customers/3')?.absent !== false, 'the entry to be dropped');
    assert.equal((await read(3)).status, 404);
  });

  test('past the window the request waits for the upstream', async () => {
    await read(4);
    fx.clock.advance(MAX_AGE_MS + 30_000);
    fx.upstream.on('/customers/4', { kind: 'json', body: { id: 4, name: 'New', status: 'active' } });
    const res = await read(4);
    assert.equal(name(res), 'New');
    assert.equal(res.headers['cache-status'], 'hypergate; fwd=miss; stored');
  });
});

describe('stale-while-revalidate off (the default)', () => {
  test('an expired entry is not served while the upstream is asked', async () => {
    const fx = await startFixture();
    try {
      const auth = bearer(await fx.token({ expiresIn: 3600 }));
      await get(`${fx.gw.url}/api/customers/1`, auth);
      fx.clock.advance(MAX_AGE_MS + 1_000);
      fx.upstream.on('/customers/1', { kind: 'json', body: { id: 1, name: 'New', status: 'active' } });
      const res = await get(`${fx.gw.url}/api/customers/1`, auth);
      assert.equal((res.json() as { name: string }).name, 'New');
    } finally {
      await fx.close();
    }
  });
});

describe('stale-while-revalidate with the breaker open', () => {
  test('entries keep answering and the refused refreshes are not warnings', async () => {
    const log = captureLog('debug');
    const fx = await startFixture(
      { cache: { staleWhileRevalidateSeconds: 30 }, upstream: { breaker: { failures: 1, cooldownMs: 600_000 } } },
      { logger: log.logger },
    );
    try {
      const auth = bearer(await fx.token({ expiresIn: 3600 }));
      await get(`${fx.gw.url}/api/customers/1`, auth);
      fx.upstream.on('/customers/2', { kind: 'json', status: 500, body: {} });
      assert.equal((await get(`${fx.gw.url}/api/customers/2`, auth)).status, 502, 'one failure opens this breaker');
      fx.clock.advance(MAX_AGE_MS + 1_000);
      const hits = fx.upstream.hits();
      for (let i = 0; i < 5; i++)
        assert.match((await get(`${fx.gw.url}/api/customers/1`, auth)).headers['cache-status'] as string, /detail=stale-while-revalidate/);
      const msgs = () => log.records().filter((r) => r['path'] === '/api/customers/1' && r['msg'] !== 'request');
      await waitFor(
        () => msgs().filter((r) => r['msg'] === 'background refresh refused by the open circuit breaker').length === 5,
        'the refused refreshes to be logged',
      );
      assert.ok(
        msgs().every((r) => r['level'] === 20),
        'debug only',
      );
      assert.equal(fx.upstream.hits(), hits, 'the upstream was not asked');
    } finally {
      await fx.close();
    }
  });
});
