import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, get, send } from '../helpers/gateway.ts';
import { MASTER_NAME, sentinelSkip, startSentinelSet, type SentinelSet } from '../helpers/redis-sentinel.ts';
import { redisSkip } from '../helpers/redis.ts';
import { metric, startSharedWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

const json = { 'content-type': 'application/json' };

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

  const urlOf = (i: number, path: string): string => `${world.gateways[i]?.url as string}${path}`;
  const cached = (i: number, path: string): boolean => world.gateways[i]?.gateway.cache.get(path) !== undefined;

  it('connects through the Sentinels and says so in /metrics', async () => {
    for (const gw of world.gateways) assert.equal(await metric(gw, 'hypergate_redis_masters', { topology: 'sentinel' }), 1);
    assert.equal((await get(urlOf(0, '/api/customers/1'), reader)).status, 200);
    assert.ok((await metric(world.gateways[0]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' })) > 0, 'the rate limit is decided in Redis');
  });

  it('fails over with no request failing, and everything shared works against the new master', async (t) => {
    const started = Date.now();
    const mark = (what: string): void => t.diagnostic(`${what} at ${Date.now() - started} ms`);
    const old = await set.master();
    let stop = false;
    const statuses: number[] = [];
    const trickle = (async () => {
      for (let n = 0; !stop; n++) {
        // Every other read a miss: the shared tier and its lock are asked too, not only the rate limit.
        statuses.push((await get(urlOf(n % 2, `/api/customers/${n % 2 === 0 ? 1 : 100 + n}`), reader)).status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const now = await set.failover();
    mark('failed over');
    assert.notEqual(now.port, old.port);
    // Both instances on the new master, subscribed again (and their caches resynchronised).
    await until(
      async () => {
        const subs = (await now.command('PUBSUB', 'NUMSUB', `${world.prefix}invalidate`)) as [string, number];
        return subs[1] === 2;
      },
      'both instances to subscribe on the new master',
      20_000,
    );
    for (const gw of world.gateways) {
      await until(async () => (await metric(gw, 'hypergate_redis_master_changes')) === 1, 'the instance to see the master move', 20_000);
      await until(async () => (await metric(gw, 'hypergate_redis_breaker_state')) === 0, 'the breaker to close', 20_000);
    }
    mark('both instances on the new master');
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await trickle;
    mark(`trickle of ${statuses.length} requests done`);
    assert.ok(statuses.length > 10, `a trickle, not a few requests (${statuses.length})`);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
    );
    for (const gw of world.gateways) assert.ok((await metric(gw, 'hypergate_cache_resyncs_total')) >= 1, 'a resync after the switch');

    // The cluster rate limit: decided on the new master.
    const rate = await metric(world.gateways[1]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' });
    assert.equal((await get(urlOf(1, '/api/customers/7'), reader)).status, 200);
    assert.equal(await metric(world.gateways[1]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' }), rate + 1);

    mark('rate limit checked');
    // The shared tier: what one instance fetched, the other reads from the new master.
    world.upstream.reset();
    assert.equal((await get(urlOf(0, '/api/customers/21'), reader)).status, 200);
    await until(async () => (await now.command('EXISTS', `${world.prefix}c:0:/api/customers/21`)) === 1, 'the entry to be shared');
    assert.equal((await get(urlOf(1, '/api/customers/21'), reader)).status, 200);
    assert.equal(world.upstream.hits('/customers/21'), 1, 'the second instance read it from the new master');

    // Invalidation: a write on one instance drops the entry from the other.
    assert.ok(cached(1, '/api/customers/21'));
    world.upstream.on('PATCH /customers/21', { kind: 'json', body: { id: 21, name: 'Renamed', status: 'active' }, headers: { etag: '"v2"' } });
    const patched = await send(
      urlOf(0, '/api/customers/21'),
      'PATCH',
      { ...writer, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
      '{"name":"Renamed"}',
    );
    assert.equal(patched.status, 200);
    await until(async () => !cached(1, '/api/customers/21'), 'the other instance to drop the entry', 2000);

    // Idempotency: a record on the new master, replayed by the other instance.
    world.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'Once', status: 'active' } });
    const headers = { ...writer, ...json, 'idempotency-key': '"after-failover"' };
    const first = await send(urlOf(0, '/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
    const again = await send(urlOf(1, '/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(world.upstream.requests.filter((r) => r.method === 'POST').length, 1, 'replayed, not sent again');
    assert.ok(((await now.command('KEYS', `${world.prefix}idem:*`)) as string[]).length > 0);
  });
});
