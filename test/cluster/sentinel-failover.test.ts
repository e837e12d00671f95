import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertSharedStateWorks, trickle } from '../helpers/failover-checks.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { MASTER_NAME, sentinelSkip, startSentinelSet, type SentinelSet } from '../helpers/redis-sentinel.ts';
import { redisSkip } from '../helpers/redis.ts';
import { metric, startSharedWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

/**
 * Redis behind Sentinel (redis.sentinels): a master, its replica and three Sentinels, real
 * processes, and two gateways. The master is failed over under a steady trickle of reads, none of
 * which may fail; then everything shared works against the new master.
 */
describe('Redis through Sentinel, failed over under load', { skip: redisSkip || sentinelSkip }, () => {
  let set: SentinelSet;
  let world: SharedWorld;
  let reader: Record<string, string>;
  let writer: Record<string, string>;

  before(async () => {
    set = await startSentinelSet();
    world = await startSharedWorld(await set.master(), 2, {
      redis: { url: null, sentinels: set.sentinels, name: MASTER_NAME },
      rateLimit: { requestsPerSecond: 1000, burst: 1000 },
    });
    reader = bearer(await world.token());
    writer = bearer(await world.token({ claims: { scope: 'customers:read customers:write' } }));
  });
  after(async () => {
    await world?.close();
    await set?.close();
  });

  it('connects through the Sentinels and says so in /metrics', async () => {
    for (const gw of world.gateways) assert.equal(await metric(gw, 'hypergate_redis_masters', { topology: 'sentinel' }), 1);
    assert.equal((await get(`${world.gateways[0]?.url as string}/api/customers/1`, reader)).status, 200);
    assert.ok((await metric(world.gateways[0]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' })) > 0, 'the rate limit is decided in Redis');
  });

  it('fails over with no request failing, resyncs, and everything shared works against the new master', async (t) => {
    const started = Date.now();
    const mark = (what: string): void => t.diagnostic(`${what} at ${Date.now() - started} ms`);
    const old = await set.master();
    const load = trickle(world, reader);
    const now = await set.failover();
    assert.notEqual(now.port, old.port);
    mark('failed over');
    // Both instances on the new master, subscribed again (and their caches resynchronised).
    await until(
      async () => ((await now.command('PUBSUB', 'NUMSUB', `${world.prefix}invalidate`)) as [string, number])[1] === 2,
      'both instances to subscribe on the new master',
      20_000,
    );
    for (const gw of world.gateways) {
      await until(async () => (await metric(gw, 'hypergate_redis_master_changes')) === 1, 'the instance to see the master move', 20_000);
      await until(async () => (await metric(gw, 'hypergate_redis_breaker_state')) === 0, 'the breaker to close', 20_000);
    }
    mark('both instances on the new master');
    mark(`trickle of ${await load.stop()} requests, every one answered`);
    for (const gw of world.gateways) assert.ok((await metric(gw, 'hypergate_cache_resyncs_total')) >= 1, 'a resync after the switch');
    await assertSharedStateWorks(world, reader, writer, async (path) => (await now.command('EXISTS', `${world.prefix}c:0:${path}`)) === 1);
  });
});
