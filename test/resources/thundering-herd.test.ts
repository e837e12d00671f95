import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer } from '../helpers/gateway.ts';
import { gate, waitFor } from '../helpers/wait.ts';

const N = 1000;

describe('thundering herd', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  // One connection per request, so that all of them are in the gateway at the same time.
  const client = new Agent({ connections: N, pipelining: 1 });
  const read = async (path: string): Promise<{ status: number; cacheStatus: string }> => {
    const res = await request(`${fx.gw.url}${path}`, { headers: auth, dispatcher: client });
    await res.body.dump();
    return { status: res.statusCode, cacheStatus: String(res.headers['cache-status']) };
  };

  before(async () => {
    // A generous upstream deadline: requests queued behind the 8 connections count their wait in it.
    fx = await startFixture({ upstream: { connections: 8, timeoutMs: 20_000 } });
    auth = bearer(await fx.token({ expiresIn: 3600 }));
    // Verify the token once, so that every request below reaches the cache without waiting.
    assert.equal((await read('/api/customers/999999')).status, 200);
  });
  after(async () => {
    await client.close();
    await fx.close();
  });

  test(`${N} concurrent requests for one uncached id make exactly one upstream request`, async () => {
    fx.upstream.reset();
    const held = gate();
    fx.upstream.on('/customers/1', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 1, name: 'Herd', status: 'active' } } });
    const answers = Promise.all(Array.from({ length: N }, () => read('/api/customers/1')));
    // The upstream answers only once every request is in the gateway, so they all overlap.
    await waitFor(() => fx.gw.gateway.metrics.inFlight === N, `${N} requests in flight`);
    held.open();
    const done = await answers;
    assert.ok(done.every((r) => r.status === 200));
    assert.equal(fx.upstream.hits('/customers/1'), 1);
    assert.equal(done.filter((r) => r.cacheStatus === 'hypergate; fwd=miss; stored').length, 1);
    assert.equal(done.filter((r) => r.cacheStatus === 'hypergate; fwd=miss; stored; collapsed').length, N - 1);
  });

  test(`${N} concurrent requests for ${N} ids never open more than upstream.connections (8) upstream connections`, async () => {
    fx.upstream.reset();
    const held = gate();
    fx.upstream.on('*', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 0 } } });
    const ids = Array.from({ length: N }, (_, i) => 1000 + i);
    for (const id of ids) {
      fx.upstream.on(`/customers/${id}`, { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id, name: `C${id}`, status: 'active' } } });
    }
    const answers = Promise.all(ids.map((id) => read(`/api/customers/${id}`)));
    // Every request waits in the gateway and the upstream pool is full before anything is answered.
    await waitFor(() => fx.gw.gateway.metrics.inFlight === N && fx.upstream.active() === 8, `${N} requests in flight and 8 at the upstream`);
    held.open();
    const done = await answers;
    assert.ok(done.every((r) => r.status === 200));
    assert.equal(fx.upstream.hits(), N);
    assert.ok(fx.upstream.maxOpenConnections() <= 8, `at most 8 upstream connections, saw ${fx.upstream.maxOpenConnections()}`);
    assert.equal(fx.upstream.active(), 0);
  });
});
