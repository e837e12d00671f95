import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { bearer, get } from '../helpers/gateway.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, startSharedWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

const BURST = 10;
const INSTANCES = 3;
const REQUESTS = 300;

// Regression: one concurrent burst over three instances passed about four times the burst when
// the rate decisions missed their deadline, as each instance fell back to a whole burst of its own.
describe('the cluster rate limit when its decisions miss their deadline', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let world: SharedWorld;

  before(async () => {
    redis = await startRedis(['--enable-debug-command', 'yes']);
    world = await startSharedWorld(redis, INSTANCES, { rateLimit: { requestsPerSecond: 1, burst: BURST }, redis: { timeoutMs: 50 } });
    const counted = async (): Promise<boolean> => {
      // On a busy machine a count can miss its 50 ms deadline and open an instance's Redis breaker,
      // whose cooldown runs on the instance's clock: each poll lets a probe through.
      for (const clock of world.clocks) clock.advance(1001);
      for (const gw of world.gateways) if ((await metric(gw, 'hypergate_redis_instances')) !== INSTANCES) return false;
      return true;
    };
    await until(counted, 'every instance to count the others', 60_000);
  });
  after(async () => {
    await world?.close();
    await redis?.close();
  });

  it(`lets at most 1.5 × burst of ${REQUESTS} concurrent requests over ${INSTANCES} instances through while Redis is slow (DEBUG SLEEP)`, async () => {
    const headers = bearer(await world.token({ claims: { sub: 'one-burst' } }));
    const sleeper = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await sleeper.connect();
    try {
      // Redis busy for a second: every decision of the burst misses its 50 ms deadline.
      const asleep = sleeper.call('DEBUG', 'SLEEP', '1');
      const answers = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => get(`${world.gateways[i % INSTANCES]?.url}/api/customers/1`, headers)));
      await asleep;
      const passed = answers.filter((a) => a.status === 200).length;
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200, 429]));
      assert.ok(passed >= 1 && passed <= 1.5 * BURST, `${passed} of ${REQUESTS} passed against a burst of ${BURST}`);
      let fallbacks = 0;
      for (const gw of world.gateways) fallbacks += await metric(gw, 'hypergate_rate_limit_fallback_total');
      assert.ok(fallbacks > 0, 'the instances decided alone');
    } finally {
      sleeper.disconnect();
    }
  });
});
