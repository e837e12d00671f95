import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { metric, STEADY_REDIS, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

describe('the shared cache tier (cache.shared)', { skip: redisSkip }, () => {
  const suite = suiteWorld(2, STEADY_REDIS);
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;
  before(() => ({ redis, world, reader } = suite.get()));

  const urlOf = (i: number): string => world.gateways[i]?.url as string;
  /**
   * Counts what instance `i` has stored in the tier so far, then returns what waits for one more.
   * Counted before the request is sent: counted while it runs, a store that came first on a busy
   * machine would already be in the count, and the wait would never end.
   */
  const shared = async (i: number): Promise<() => Promise<void>> => {
    const stored = (): Promise<number> => metric(world.gateways[i]!, 'hypergate_shared_cache_total', { outcome: 'stored' });
    const before = await stored();
    return () => until(async () => (await stored()) > before, 'the entry to be shared');
  };

  it("keeps Age counting from when the upstream answered, whatever the other instance's clock says", async () => {
    // The upstream says its answer is 7 s old; B's clock runs 100 s ahead of A's.
    world.upstream.on('/customers/11', { kind: 'json', body: { id: 11, name: 'Aged', status: 'active' }, headers: { age: '7' } });
    const b = await world.add({}, new ManualClock(Date.now() + 100_000));
    const waiting = await shared(0);
    const first = await get(`${urlOf(0)}/api/customers/11`, reader);
    await waiting();
    assert.equal(first.headers.age, '7');
    const second = await get(`${b.url}/api/customers/11`, bearer(await world.token({ nowSeconds: Math.floor(Date.now() / 1000) + 100 })));
    assert.equal(second.status, 200);
    assert.equal(second.headers.etag, first.headers.etag);
    const age = Number(second.headers.age);
    assert.ok(age >= 7 && age <= 9, `Age ${age}: from the upstream's answer, not B's clock`);
    assert.equal(second.headers['cache-control'], 'max-age=60');
    assert.equal(world.upstream.hits('/customers/11'), 1);
  });

  it("keeps the upstream's validator: an entry read from the tier has the same ETag in every format as on the instance that fetched it", async () => {
    world.upstream.on('/customers/15', { kind: 'json', body: { id: 15, name: 'Tagged', status: 'active' }, headers: { etag: '"v5"' } });
    const hal = { ...reader, accept: 'application/hal+json' };
    const waiting = await shared(0);
    assert.equal((await get(`${urlOf(0)}/api/customers/15`, reader)).status, 200);
    await waiting();
    const here = await get(`${urlOf(0)}/api/customers/15`, hal);
    const there = await get(`${urlOf(1)}/api/customers/15`, hal);
    assert.match(String(here.headers.etag), /^"v5\./, "derived from the upstream's ETag");
    assert.equal(there.headers.etag, here.headers.etag);
    assert.equal(world.upstream.hits('/customers/15'), 1, 'B read it from the tier');
  });

  it("shares the upstream's 404 (a cached absence) too", async () => {
    const waiting = await shared(0);
    assert.equal((await get(`${urlOf(0)}/api/customers/999999999`, reader)).status, 404);
    await waiting();
    assert.equal((await get(`${urlOf(1)}/api/customers/999999999`, reader)).status, 404);
    assert.equal(world.upstream.hits('/customers/999999999'), 1);
  });

  it('lets the others fetch themselves when the instance holding the herd lock died', async () => {
    // A lock whose holder is gone: it expires by itself; until then the others wait for it.
    await redis.command('SET', `${world.prefix}l:/api/customers/12`, 'dead-instance', 'PX', 300);
    const res = await get(`${urlOf(1)}/api/customers/12`, reader);
    assert.equal(res.status, 200);
    assert.equal(world.upstream.hits('/customers/12'), 1);
  });

  it('never touches Redis on a local cache hit', async () => {
    assert.equal((await get(`${urlOf(0)}/api/customers/13`, reader)).status, 200);
    // What a lookup in Redis would show: tier reads (the miss's own write and unlock may still settle).
    const calls = async (): Promise<string> =>
      (await world.gateways[0]!.gateway.metrics.text())
        .split('\n')
        .filter((l) => l.startsWith('hypergate_redis_calls_total{op="tier_read"'))
        .join('\n');
    const before = await calls();
    for (let n = 0; n < 50; n++)
      assert.equal((await get(`${urlOf(0)}/api/customers/13`, reader)).headers['cache-status']?.toString().startsWith('hypergate; hit'), true);
    assert.equal(await calls(), before);
  });

  it('can be switched off with cache.shared false: a miss goes straight to the upstream', async () => {
    const c = await world.add({ cache: { shared: false } });
    assert.equal((await get(`${urlOf(0)}/api/customers/14`, reader)).status, 200);
    assert.equal((await get(`${c.url}/api/customers/14`, reader)).status, 200);
    assert.equal(world.upstream.hits('/customers/14'), 2);
    assert.equal(await metric(c, 'hypergate_redis_calls_total', { op: 'tier_read', outcome: 'ok' }), 0);
  });
});
