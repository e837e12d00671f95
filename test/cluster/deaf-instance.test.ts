import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { get, send } from '../helpers/gateway.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { metric, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

const GRACE_MS = 1000;

/**
 * An instance that cannot hear the others' invalidations (Redis killed: its subscription is down)
 * serves its cached entries of a resource that takes writes for at most redis.invalidationGraceMs,
 * then reads them again, until the subscription is back and its cache resynced. Each instance has
 * its own clock, moved by the test.
 */
describe('an instance that cannot hear invalidations (Redis)', { skip: redisSkip }, () => {
  const suite = suiteWorld(2, { redis: { invalidationGraceMs: GRACE_MS } });
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;
  let writer: Record<string, string>;
  before(() => ({ redis, world, reader, writer } = suite.get()));

  const nameOn = async (i: number, path: string): Promise<{ name: string; cacheStatus: string }> => {
    const res = await get(world.url(i, path), reader);
    assert.equal(res.status, 200);
    return { name: (res.json() as { name: string }).name, cacheStatus: String(res.headers['cache-status']) };
  };

  it('reads an entry again once the grace has passed, and serves from its cache again once it hears again', async () => {
    const path = '/api/customers/41';
    world.upstream.on('GET /customers/41', { kind: 'json', body: { id: 41, name: 'Before', status: 'active' } });
    assert.equal((await nameOn(1, path)).name, 'Before');
    assert.match((await nameOn(1, path)).cacheStatus, /hit/);

    await redis.kill();
    await until(async () => (await metric(world.gateways[1]!, 'hypergate_redis_up')) === 0, 'the second instance to see Redis gone');
    world.upstream.on('PATCH /customers/41', { kind: 'json', body: { id: 41, name: 'After', status: 'active' } });
    world.upstream.on('GET /customers/41', { kind: 'json', body: { id: 41, name: 'After', status: 'active' } });
    assert.equal(
      (await send(world.url(0, path), 'PATCH', { ...writer, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, '{"name":"After"}')).status,
      200,
    );

    // The second instance never heard of the write: past the grace it does not answer from its cache.
    world.clocks[1]?.advance(GRACE_MS + 1);
    assert.equal((await nameOn(1, path)).name, 'After');

    await redis.restart();
    await until(async () => world.gateways[1]?.gateway.shared.hearing.deaf === false, 'the second instance to subscribe again');
    assert.equal((await nameOn(1, path)).name, 'After');
    assert.match((await nameOn(1, path)).cacheStatus, /hit/, 'served from its cache again');
  });
});
