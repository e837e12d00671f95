import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { get, startGateway } from '../helpers/gateway.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';
import { gate } from '../helpers/wait.ts';
import { captureLog } from '../helpers/log.ts';

describe('invalidation everywhere (Redis pub/sub)', { skip: redisSkip }, () => {
  // One call that times out opens an instance's Redis breaker: a call made while another is
  // overdue is refused without counting, and an invalidation is sent even then (only the open
  // breaker refuses it), so the tests below open the breaker with one.
  const suite = suiteWorld(2, { redis: { breaker: { failures: 1 } } });
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;
  before(() => ({ redis, world, reader } = suite.get()));

  const urlOf = (i: number): string => world.gateways[i]?.url as string;
  const cached = (i: number, path: string): boolean => world.gateways[i]?.gateway.cache.get(path) !== undefined;

  it("drops a write's invalidation (shared.invalidate) from the other instance's cache and from Redis", async () => {
    for (const i of [0, 1]) assert.equal((await get(`${urlOf(i)}/api/customers/3/orders`, reader)).status, 200);
    assert.ok(cached(1, '/api/customers/3/orders'));
    const done = world.gateways[0]?.gateway.shared.invalidate(['/api/customers/3'], ['below:/api/customers/3']);
    assert.equal(await done?.instances, 2);
    await until(async () => !cached(1, '/api/customers/3/orders'), 'the other instance to drop what lies below the customer', 1000);
    assert.equal(await redis.command('EXISTS', `${world.prefix}c:0:/api/customers/3/orders`), 0, 'gone from the shared tier too');
    const hits = world.upstream.hits('/customers/3/orders');
    assert.equal((await get(`${urlOf(1)}/api/customers/3/orders`, reader)).status, 200);
    assert.equal(world.upstream.hits('/customers/3/orders'), hits + 1, 'the next read goes to the upstream');
  });

  it('purges everything on every instance, and nothing of the old generation is read back from Redis', async () => {
    for (const i of [0, 1]) assert.equal((await get(`${urlOf(i)}/api/customers/4`, reader)).status, 200);
    const done = world.gateways[1]?.gateway.shared.clear();
    assert.equal(await done?.instances, 2);
    await until(async () => world.gateways[0]?.gateway.cache.size === 0, 'the other instance to clear', 1000);
    const hits = world.upstream.hits('/customers/4');
    assert.equal((await get(`${urlOf(0)}/api/customers/4`, reader)).status, 200);
    assert.equal(world.upstream.hits('/customers/4'), hits + 1);
  });

  it('keeps a load that began before an invalidation from storing its answer in Redis, even before the broadcast arrives', async () => {
    const held = gate();
    world.upstream.on('/customers/5', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 5, name: 'Old', status: 'active' } } });
    const loading = get(`${urlOf(0)}/api/customers/5`, reader);
    await until(async () => world.upstream.active() === 1, 'the load to reach the upstream');
    // Another instance's write invalidated the item in Redis; its message has not reached this one yet.
    const [seconds, micros] = (await redis.command('TIME')) as [string, string];
    await redis.command('SET', `${world.prefix}i:k:/api/customers/5`, Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), 'PX', 60_000);
    const writes = await metric(world.gateways[0]!, 'hypergate_redis_calls_total', { op: 'tier_write', outcome: 'ok' });
    const stored = await metric(world.gateways[0]!, 'hypergate_shared_cache_total', { outcome: 'stored' });
    held.open();
    assert.equal((await loading).status, 200);
    await until(
      async () => (await metric(world.gateways[0]!, 'hypergate_redis_calls_total', { op: 'tier_write', outcome: 'ok' })) > writes,
      'the write to be answered',
    );
    assert.equal(await redis.command('EXISTS', `${world.prefix}c:0:/api/customers/5`), 0, 'the old answer was not shared');
    assert.equal(await metric(world.gateways[0]!, 'hypergate_shared_cache_total', { outcome: 'stored' }), stored);
  });

  it('clears the local cache when the subscription was cut (CLIENT KILL TYPE pubsub) and comes back', async () => {
    assert.equal((await get(`${urlOf(1)}/api/customers/6`, reader)).status, 200);
    const before = await metric(world.gateways[1]!, 'hypergate_cache_resyncs_total');
    await redis.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await until(async () => (await metric(world.gateways[1]!, 'hypergate_cache_resyncs_total')) > before, 'the subscription to come back');
    assert.equal(cached(1, '/api/customers/6'), false, 'an invalidation sent while it was away may have been missed');
    // And the new subscription works.
    assert.equal((await get(`${urlOf(1)}/api/customers/7`, reader)).status, 200);
    await until(async () => ((await redis.command('PUBSUB', 'NUMSUB', `${world.prefix}invalidate`)) as [string, number])[1] === 2, 'both to subscribe again');
    assert.equal(await world.gateways[0]?.gateway.shared.invalidate(['/api/customers/7'], []).instances, 2);
    await until(async () => !cached(1, '/api/customers/7'), 'the invalidation to arrive', 1000);
  });

  it('sends an invalidation Redis did not take again once it answers', async () => {
    assert.equal((await get(`${urlOf(1)}/api/customers/8`, reader)).status, 200);
    const a = world.gateways[0]!;
    // Open A's breaker: three calls that time out while Redis is stopped (connections stay up).
    redis.pause();
    try {
      for (let n = 0; n < 3; n++) assert.deepEqual(await a.gateway.shared.idempotency.begin('s', `k${n}`, 'f', 60), { state: 'unavailable' });
    } finally {
      redis.resume();
    }
    const resyncs = await metric(world.gateways[1]!, 'hypergate_cache_resyncs_total');
    assert.equal(await a.gateway.shared.invalidate(['/api/customers/8'], []).instances, null, 'not confirmed: refused by the open breaker');
    assert.ok(cached(1, '/api/customers/8'));
    // Once the breaker's cooldown is over (A's clock), the queued invalidation goes out.
    world.clocks[0]?.advance(1001);
    await until(async () => !cached(1, '/api/customers/8'), 'the queued invalidation to arrive', 5000);
    assert.equal(await metric(world.gateways[1]!, 'hypergate_cache_resyncs_total'), resyncs, 'delivered, not a resync');
    assert.ok((await metric(a, 'hypergate_invalidations_total', { direction: 'queued' })) >= 1);
  });

  it('reads nothing from the shared tier while an invalidation Redis did not take waits to be sent again', async () => {
    const a = world.gateways[0]!;
    world.upstream.on('/customers/9', { kind: 'json', body: { id: 9, name: 'Old', status: 'active' } });
    const stored = await metric(a, 'hypergate_shared_cache_total', { outcome: 'stored' });
    assert.equal((await get(`${urlOf(0)}/api/customers/9`, reader)).status, 200);
    await until(async () => (await metric(a, 'hypergate_shared_cache_total', { outcome: 'stored' })) > stored, 'the old version to be shared');
    // Open A's breaker: calls that time out while Redis is stopped (connections stay up).
    redis.pause();
    try {
      for (let n = 0; n < 3; n++) assert.deepEqual(await a.gateway.shared.idempotency.begin('s', `q${n}`, 'f', 60), { state: 'unavailable' });
    } finally {
      redis.resume();
    }
    // A write changed the customer: dropped here at once, the broadcast (and the drop in Redis) queued.
    world.upstream.on('/customers/9', { kind: 'json', body: { id: 9, name: 'New', status: 'active' } });
    assert.equal(await a.gateway.shared.invalidate(['/api/customers/9'], []).instances, null, 'not confirmed: refused by the open breaker');
    // The breaker lets a call through again before the queue is sent (once a second): a tier read
    // then would find the old version, which Redis still holds.
    world.clocks[0]?.advance(1001);
    const read = await get(`${urlOf(0)}/api/customers/9`, reader);
    assert.equal((read.json() as { name: string }).name, 'New');
  });

  it('drops what an instance cached before its first subscription was made, once it is made (invalidations sent meanwhile were unseen)', async (t) => {
    // Redis answers nothing while the new instance starts: it serves, and its subscription waits.
    redis.pause();
    let paused = true;
    t.after(() => {
      if (paused) redis.resume();
    });
    const late = await startGateway(world.config());
    t.after(() => late.close());
    assert.equal((await get(`${late.url}/api/customers/41`, reader)).status, 200);
    assert.ok(late.gateway.cache.get('/api/customers/41') !== undefined, 'cached before the subscription');
    redis.resume();
    paused = false;
    await until(
      async () => ((await redis.command('PUBSUB', 'NUMSUB', `${world.prefix}invalidate`)) as [string, number])[1] === 3,
      'the new instance to subscribe',
    );
    await until(async () => late.gateway.cache.get('/api/customers/41') === undefined, 'the entry cached before it to be dropped', 1000);
  });

  it('counts an invalidation Redis did not take once as queued, however many times it is sent again', async () => {
    assert.equal((await get(`${urlOf(1)}/api/customers/9`, reader)).status, 200);
    const a = world.gateways[0]!;
    const queued = await metric(a, 'hypergate_invalidations_total', { direction: 'queued' });
    const failedCalls = async (): Promise<number> => {
      let n = 0;
      for (const outcome of ['rejected', 'timeout', 'down']) n += await metric(a, 'hypergate_redis_calls_total', { op: 'invalidate', outcome });
      return n;
    };
    const failedBefore = await failedCalls();
    redis.pause();
    try {
      assert.equal(await a.gateway.shared.invalidate(['/api/customers/9'], []).instances, null, 'not confirmed: Redis is stopped');
      // Sent again a second later, and failing again while Redis stays stopped.
      await until(async () => (await failedCalls()) >= failedBefore + 2, 'the queued invalidation to be sent again and fail', 8000);
      assert.ok(cached(1, '/api/customers/9'));
    } finally {
      redis.resume();
    }
    // Past the breaker's cooldown (A's clock), should the failures have opened it.
    world.clocks[0]?.advance(1001);
    await until(async () => !cached(1, '/api/customers/9'), 'the queued invalidation to arrive', 8000);
    assert.equal(await metric(a, 'hypergate_invalidations_total', { direction: 'queued' }), queued + 1);
  });
});

describe('the first subscription of an instance started while Redis was down', { skip: redisSkip }, () => {
  it('is logged as made at last, not as lost and back', async (t) => {
    const redis = await startRedis();
    t.after(() => redis.close());
    await redis.kill();
    const log = captureLog();
    const gw = await startGateway({ redis: { url: redis.url, keyPrefix: 'first:' }, log: { access: false } }, { logger: log.logger });
    t.after(() => gw.close());
    await redis.restart();
    const cleared = (): Record<string, unknown> | undefined =>
      log.records().find((r) => r['event'] === 'redis' && String(r['msg']).includes('local cache was cleared'));
    await until(async () => cleared() !== undefined, 'the subscription to be made');
    assert.match(String(cleared()?.['msg']), /made at last \(Redis was unavailable at start\)/);
  });
});
