import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { get, send } from '../helpers/gateway.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';
import { gate } from '../helpers/wait.ts';

const mergePatch = { 'content-type': 'application/merge-patch+json' };
const ROUNDS = 12;

/**
 * Read-your-write across instances: three gateways on one Redis, each holding an item in its
 * cache. A write answered by one instance has told the others (Redis took the broadcast) before
 * its answer: a read on another instance that starts after the answer never shows the version the
 * write replaced. Every other round Redis is busy for 100 ms (DEBUG SLEEP) when the write's
 * invalidation is sent: well within the 2 s Redis deadline, so Redis is healthy, only slower
 * than a client that reads at once.
 */
describe('read-your-write across instances (Redis)', { skip: redisSkip }, () => {
  // A deadline no busy test machine runs past: Redis answering within it is Redis healthy.
  const suite = suiteWorld(3, { redis: { timeoutMs: 2000 } }, ['--enable-debug-command', 'yes']);
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;
  let writer: Record<string, string>;
  before(() => ({ redis, world, reader, writer } = suite.get()));

  const nameOn = async (i: number, path: string): Promise<string> => ((await get(world.url(i, path), reader)).json() as { name: string }).name;

  it('no read on another instance that starts after the write was answered shows the old version', async (t) => {
    const path = '/api/customers/31';
    const stale: string[] = [];
    const sleeper = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    t.after(() => sleeper.disconnect());
    for (let round = 1; round <= ROUNDS; round++) {
      const writerIndex = round % 3;
      const others = [0, 1, 2].filter((i) => i !== writerIndex);
      const before = `v${round - 1}`;
      const now = `v${round}`;
      world.upstream.on('GET /customers/31', { kind: 'json', body: { id: 31, name: before, status: 'active' } });
      // Every instance holds the old version.
      for (const i of [0, 1, 2]) if ((await nameOn(i, path)) !== before) world.gateways[i]?.gateway.cache.delete(path);
      for (const i of [0, 1, 2]) assert.equal(await nameOn(i, path), before);
      const held = gate();
      world.upstream.on('PATCH /customers/31', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 31, name: now, status: 'active' } } });
      world.upstream.on('GET /customers/31', { kind: 'json', body: { id: 31, name: now, status: 'active' } });
      const patching = send(world.url(writerIndex, path), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, `{"name":"${now}"}`);
      await until(async () => world.upstream.active() === 1, 'the PATCH to reach the upstream');
      const busy = round % 2 === 0 ? sleeper.call('DEBUG', 'SLEEP', '0.1') : Promise.resolve();
      held.open();
      const patched = await patching;
      assert.equal(patched.status, 200);
      const seen = await Promise.all(others.map((i) => nameOn(i, path)));
      for (const [k, name] of seen.entries()) if (name !== now) stale.push(`round ${round}: instance ${others[k]} answered ${name} after ${now} was written`);
      await busy;
    }
    assert.deepEqual(stale, []);
  });
});
