import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, startSharedWorld, STEADY_REDIS, until, type SharedWorld } from '../helpers/shared-world.ts';
import { startTenantUpstream, type TenantUpstream } from '../helpers/tenant-upstream.ts';

const nameOf = (answer: HttpAnswer): string => (answer.json() as { name: string }).name;

/**
 * The shared tier keys a varying resource's entries by identity as the local cache does: an
 * instance adopts from Redis only the entry of the asker's own identity, and a purge on one
 * instance drops every identity's entry in Redis and on every instance.
 */
describe('a tenant-varying resource in the shared tier', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let up: TenantUpstream;
  let world: SharedWorld;
  let a: Record<string, string>;
  let b: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    up = await startTenantUpstream();
    world = await startSharedWorld(redis, 2, { ...STEADY_REDIS, upstream: { url: up.url, forwardClaims: { 'X-Tenant': 'tenant' } } });
    a = bearer(await world.token({ claims: { sub: 'ann', tenant: 'a' } }));
    b = bearer(await world.token({ claims: { sub: 'bea', tenant: 'b' } }));
  });
  after(async () => {
    await world?.close();
    await up?.close();
    await redis?.close();
  });

  const urlOf = (i: number): string => world.gateways[i]?.url as string;
  const stored = (i: number): Promise<number> => metric(world.gateways[i]!, 'hypergate_shared_cache_total', { outcome: 'stored' });

  it("adopts from Redis only the asker's own identity's entry", async () => {
    const before = await stored(0);
    assert.equal(nameOf(await get(`${urlOf(0)}/api/customers/1`, a)), 'a en');
    await until(async () => (await stored(0)) > before, "tenant a's entry in Redis");
    const other = await get(`${urlOf(1)}/api/customers/1`, b);
    assert.equal(nameOf(other), 'b en', "tenant a's entry in Redis never answers tenant b");
    const same = await get(`${urlOf(1)}/api/customers/1`, a);
    assert.equal(nameOf(same), 'a en');
    assert.equal(same.headers['cache-status'], 'hypergate; fwd=miss; stored', 'read from the tier, not the upstream');
    assert.deepEqual(
      up.seen.map((h) => h['x-tenant']),
      ['a', 'b'],
    );
  });

  it("a purge on one instance drops every tenant's entry, in Redis and on the others", async () => {
    up.seen.length = 0;
    const before = await stored(0);
    await get(`${urlOf(0)}/api/customers/2`, a);
    await get(`${urlOf(0)}/api/customers/2`, b);
    await until(async () => (await stored(0)) >= before + 2, 'both entries in Redis');
    await get(`${urlOf(1)}/api/customers/2`, a);
    await get(`${urlOf(1)}/api/customers/2`, b);
    assert.equal(up.seen.length, 2, 'instance 1 adopted both from the tier');
    const received = (): Promise<number> => metric(world.gateways[1]!, 'hypergate_invalidations_total', { direction: 'received' });
    const heard = await received();
    const purged = await world.gateways[0]!.gateway.purge('/api/customers/2');
    assert.equal(purged.instances, 2);
    await until(async () => (await received()) > heard, 'the purge to reach instance 1');
    for (const token of [a, b]) assert.equal((await get(`${urlOf(1)}/api/customers/2`, token)).status, 200);
    // Nothing was left on instance 1 nor in Redis: each tenant's read went to the upstream.
    assert.deepEqual(
      up.seen.slice(2).map((h) => h['x-tenant']),
      ['a', 'b'],
    );
  });
});
