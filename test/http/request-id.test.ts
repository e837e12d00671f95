import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isSafeRequestId, RequestIds } from '../../src/observability/request-id.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('request identity', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture();
    auth = bearer(await fx.token());
  });
  after(() => fx.close());

  it('makes an id when the caller sends none, and returns it', async () => {
    const a = await get(`${fx.gw.url}/api/customers/1`, auth);
    const b = await get(`${fx.gw.url}/api/customers/1`, auth);
    assert.match(String(a.headers['x-request-id']), /^[A-Za-z0-9_-]+-[0-9a-z]+$/);
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
  });

  it('keeps a safe incoming X-Request-Id and passes it to the upstream with traceparent', async () => {
    fx.upstream.reset();
    const res = await get(`${fx.gw.url}/api/customers/31`, { ...auth, 'x-request-id': 'client-abc:42', traceparent: TRACEPARENT, tracestate: 'v=1' });
    assert.equal(res.headers['x-request-id'], 'client-abc:42');
    const seen = fx.upstream.headersSeen[0];
    assert.equal(seen?.['x-request-id'], 'client-abc:42');
    assert.equal(seen?.['traceparent'], TRACEPARENT);
    assert.equal(seen?.['tracestate'], 'v=1');
  });

  it('replaces an unsafe or oversized X-Request-Id and drops a malformed traceparent', async () => {
    fx.upstream.reset();
    for (const bad of ['has space', 'quote"', 'x'.repeat(129)]) {
      const res = await get(`${fx.gw.url}/api/customers/${32 + bad.length}`, { ...auth, 'x-request-id': bad, traceparent: '00-zz-00-01' });
      assert.notEqual(res.headers['x-request-id'], bad);
      assert.ok(isSafeRequestId(String(res.headers['x-request-id'])));
    }
    for (const seen of fx.upstream.headersSeen) {
      assert.ok(isSafeRequestId(String(seen['x-request-id'])));
      assert.equal(seen['traceparent'], undefined);
    }
  });

  it('puts the request id on problem answers too', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, { 'x-request-id': 'no-token-1' });
    assert.equal(res.status, 401);
    assert.equal(res.headers['x-request-id'], 'no-token-1');
    assert.equal((await get(`${fx.gw.url}/nowhere`, { 'x-request-id': 'nowhere-1' })).headers['x-request-id'], 'nowhere-1');
  });

  it('makes ids that are unique and cheap: a per-process prefix and a counter', () => {
    const ids = new RequestIds('p');
    assert.deepEqual([ids.next(), ids.next()], ['p-1', 'p-2']);
    assert.notEqual(new RequestIds().next(), new RequestIds().next());
    // Made in blocks of 256: the counter runs on across them, every id safe and distinct.
    const many = Array.from({ length: 1000 }, () => ids.next());
    assert.deepEqual(many.slice(253, 257), ['p-74', 'p-75', 'p-76', 'p-77'], 'ids 256 to 259 straddle the first block boundary');
    assert.equal(new Set(many).size, many.length);
    assert.ok(many.every((id) => isSafeRequestId(id)));
    assert.equal(many.at(-1), `p-${(1002).toString(36)}`);
  });
});

describe('Cache-Status (RFC 9211)', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture();
    auth = bearer(await fx.token());
  });
  after(() => fx.close());

  it('says fwd=miss; stored on the first read and hit with the remaining ttl after', async () => {
    const miss = await get(`${fx.gw.url}/api/customers/41`, auth);
    assert.equal(miss.headers['cache-status'], 'hypergate; fwd=miss; stored');
    const hit = await get(`${fx.gw.url}/api/customers/41`, auth);
    assert.equal(hit.headers['cache-status'], 'hypergate; hit; ttl=60');
    fx.clock.advance(10_000);
    const later = await get(`${fx.gw.url}/api/customers/41`, auth);
    assert.equal(later.headers['cache-status'], 'hypergate; hit; ttl=50');
    assert.equal(later.headers['age'], '10');
  });

  it('is on 304 and HEAD answers too', async () => {
    const first = await get(`${fx.gw.url}/api/customers/42`, auth);
    const etag = String(first.headers['etag']);
    const notModified = await get(`${fx.gw.url}/api/customers/42`, { ...auth, 'if-none-match': etag });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers['cache-status'], 'hypergate; hit; ttl=60');
    const head = await get(`${fx.gw.url}/api/customers/42`, auth, 'HEAD');
    assert.equal(head.headers['cache-status'], 'hypergate; hit; ttl=60');
  });

  it("says collapsed for reads that rode on another request's upstream fetch", async () => {
    fx.upstream.on('/customers/43', { kind: 'delay', ms: 100, then: { kind: 'json', body: { id: 43, name: 'N', status: 'active' } } });
    const answers = await Promise.all([1, 2, 3].map(() => get(`${fx.gw.url}/api/customers/43`, auth)));
    const statuses = answers.map((a) => a.headers['cache-status']).sort();
    assert.deepEqual(statuses, ['hypergate; fwd=miss; stored', 'hypergate; fwd=miss; stored; collapsed', 'hypergate; fwd=miss; stored; collapsed']);
    assert.equal(fx.upstream.hits('/customers/43'), 1);
  });

  it('has no "stored" when the upstream forbids storing', async () => {
    fx.upstream.on('/customers/44', { kind: 'json', body: { id: 44, name: 'N', status: 'active' }, headers: { 'cache-control': 'no-store' } });
    const res = await get(`${fx.gw.url}/api/customers/44`, auth);
    assert.equal(res.headers['cache-status'], 'hypergate; fwd=miss');
  });
});
