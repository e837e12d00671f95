import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import type { UpstreamHeaders } from '../helpers/upstream.ts';

/**
 * How the gateway reads a real upstream's freshness (RFC 9111 sections 4.2.1, 5.2, 5.3): what our
 * Cache-Control says, and whether the next read goes to the upstream again.
 */
describe('upstream freshness', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  let id = 300;
  before(async () => {
    fx = await startFixture();
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  /** A fresh customer id whose upstream answer carries `headers`; returns its gateway path and upstream path. */
  function customerWith(headers: UpstreamHeaders): { path: string; upstreamPath: string } {
    id++;
    fx.upstream.on(`/customers/${id}`, { kind: 'json', body: { id, name: 'N', status: 's' }, headers });
    return { path: `/api/customers/${id}`, upstreamPath: `/customers/${id}` };
  }
  const read = (path: string): Promise<HttpAnswer> => get(`${fx.gw.url}${path}`, auth);
  /** The upstream's Date and Expires for "expires `seconds` after now", in the upstream's own clock. */
  const httpDate = (offsetMs: number): string => new Date(Date.now() + offsetMs).toUTCString();

  /** The answer is served with max-age=0, not stored, and the next read goes to the upstream again. */
  async function assertStaleOnArrival(headers: UpstreamHeaders): Promise<void> {
    const { path, upstreamPath } = customerWith(headers);
    const first = await read(path);
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-control'], 'max-age=0');
    assert.equal(first.headers['cache-status'], 'hypergate; fwd=miss', 'not said to be stored');
    const second = await read(path);
    assert.equal(second.status, 200);
    assert.equal(second.headers['cache-control'], 'max-age=0');
    assert.equal(fx.upstream.hits(upstreamPath), 2, 'the second read went to the upstream');
  }

  for (const value of ['max-age=-1', 'max-age=abc', 'max-age=5.5', 'max-age=0, max-age=60']) {
    test(`an upstream Cache-Control: ${value} is stale: answered with max-age=0 and fetched again`, async () => {
      await assertStaleOnArrival({ 'cache-control': value });
    });
  }

  test('an upstream Expires: 0 is already expired: answered with max-age=0 and fetched again', async () => {
    await assertStaleOnArrival({ expires: '0' });
  });

  test('an upstream max-age on two field lines with different values is stale', async () => {
    await assertStaleOnArrival({ 'cache-control': ['max-age=0', 'max-age=60'] });
  });

  test('an upstream Expires at or before its Date is stale, whatever our clock says', async () => {
    // The upstream's clock is an hour ahead: its Expires is still in our future, but not in its own.
    await assertStaleOnArrival({ date: httpDate(3_600_000), expires: httpDate(3_599_000) });
  });

  test('an upstream Expires 30 s after its Date gives an entry fresh for 30 s', async () => {
    const { path, upstreamPath } = customerWith({ date: httpDate(0), expires: httpDate(30_000) });
    assert.equal((await read(path)).headers['cache-control'], 'max-age=30');
    fx.clock.advance(29_000);
    await read(path);
    assert.equal(fx.upstream.hits(upstreamPath), 1);
    fx.clock.advance(1_000);
    await read(path);
    assert.equal(fx.upstream.hits(upstreamPath), 2);
  });

  test('an upstream max-age overrides its Expires', async () => {
    const { path, upstreamPath } = customerWith({ 'cache-control': 'max-age=20', expires: '0' });
    assert.equal((await read(path)).headers['cache-control'], 'max-age=20');
    await read(path);
    assert.equal(fx.upstream.hits(upstreamPath), 1);
  });

  test('an upstream s-maxage wins over its max-age', async () => {
    const { path, upstreamPath } = customerWith({ 'cache-control': 'max-age=5, s-maxage=30' });
    assert.equal((await read(path)).headers['cache-control'], 'max-age=30');
    fx.clock.advance(29_000);
    await read(path);
    assert.equal(fx.upstream.hits(upstreamPath), 1);
  });

  test('the same upstream max-age twice is no conflict: it is stored', async () => {
    const { path, upstreamPath } = customerWith({ 'cache-control': 'max-age=30, max-age=30' });
    assert.equal((await read(path)).headers['cache-control'], 'max-age=30');
    await read(path);
    assert.equal(fx.upstream.hits(upstreamPath), 1);
  });

  for (const value of ['private', 'private="x"', 'no-cache', 'no-cache="x"']) {
    test(`an upstream Cache-Control: ${value}, max-age=600 is not stored and answered with no-store`, async () => {
      const { path, upstreamPath } = customerWith({ 'cache-control': `${value}, max-age=600` });
      const first = await read(path);
      assert.equal(first.headers['cache-control'], 'no-store');
      assert.equal(first.headers['cache-status'], 'hypergate; fwd=miss');
      await read(path);
      assert.equal(fx.upstream.hits(upstreamPath), 2);
    });
  }

  test('a stored entry is dropped when the upstream answers with invalid freshness on refresh', async () => {
    const { path, upstreamPath } = customerWith({ 'cache-control': 'max-age=10' });
    await read(path);
    fx.clock.advance(10_000);
    fx.upstream.on(upstreamPath, { kind: 'json', body: { id, name: 'Renamed', status: 's' }, headers: { 'cache-control': 'max-age=abc' } });
    const refreshed = await read(path);
    assert.equal(refreshed.headers['cache-control'], 'max-age=0');
    assert.equal((refreshed.json() as { name: string }).name, 'Renamed');
    assert.equal(fx.gw.gateway.cache.get(path), undefined, 'the expired copy is not kept either');
  });
});
