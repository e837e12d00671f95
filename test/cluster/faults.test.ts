import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, describe, it } from 'node:test';
import { bearer, get, send, type HttpAnswer } from '../helpers/gateway.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, startSharedWorld, until, type SharedWorld } from '../helpers/shared-world.ts';
import { gate } from '../helpers/wait.ts';

/** Every Redis feature on: cluster rate limits (far above what the traffic sends), the shared tier, invalidations. */
const CONFIG = { redis: { timeoutMs: 50 }, rateLimit: { requestsPerSecond: 10_000, burst: 10_000 } };

interface Run {
  readonly statuses: number[];
  readonly slowestMs: number;
}

let nextId = 1000;

/**
 * Client traffic against both instances, four at a time: new ids (local misses: shared tier, herd
 * lock, upstream) and repeated ones (local hits), each request also a rate decision. Runs `count`
 * requests, or until `forMs` has passed when given (bounded either way).
 */
async function traffic(world: SharedWorld, headers: Record<string, string>, count: number, forMs = 0): Promise<Run> {
  const statuses: number[] = [];
  let slowestMs = 0;
  const end = performance.now() + forMs;
  let sent = 0;
  const lane = async (): Promise<void> => {
    while (sent < count && (forMs === 0 || performance.now() < end)) {
      const n = sent++;
      const id = n % 3 === 0 ? 1 + (n % 20) : nextId++;
      const started = performance.now();
      const res = await get(`${world.gateways[n % 2]?.url}/api/customers/${id}`, headers);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      statuses.push(res.status);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  return { statuses, slowestMs };
}

function allOk(run: Run): void {
  assert.ok(run.statuses.length > 0);
  assert.deepEqual(
    run.statuses.filter((s) => s !== 200),
    [],
    'no request failed because of Redis',
  );
}

/** Both instances use Redis again: connected, sharing entries, and a purge reaches both. */
async function usingRedisAgain(world: SharedWorld, headers: Record<string, string>): Promise<void> {
  for (const gw of world.gateways) await until(async () => (await metric(gw, 'hypergate_redis_up')) === 1, 'the connection to come back');
  await until(
    async () => ((await world.redis.command('PUBSUB', 'NUMSUB', `${world.prefix}invalidate`)) as [string, number])[1] === 2,
    'both to subscribe again',
  );
  const stored = await metric(world.gateways[0]!, 'hypergate_shared_cache_total', { outcome: 'stored' });
  // A few requests until one is shared. The breaker's cooldown (redis.breaker.cooldownMs) runs on
  // the instances' clocks: each round lets one pass, so an open breaker (calls that timed out on
  // a busy machine) gets its probe.
  await until(async () => {
    for (const clock of world.clocks) clock.advance(1001);
    allOk(await traffic(world, headers, 4));
    return (await metric(world.gateways[0]!, 'hypergate_shared_cache_total', { outcome: 'stored' })) > stored;
  }, 'entries to be shared again');
  // A purge reaches both. Its broadcast waits up to 5 s for Redis, not the 50 ms of the requests'
  // calls, which a busy machine can miss; a breaker opened by such a miss gets its probe per round.
  await until(async () => {
    for (const clock of world.clocks) clock.advance(1001);
    return (await world.gateways[1]?.gateway.shared.invalidate(['/api/customers/1'], [], 5000).instances) === 2;
  }, 'a purge to reach both instances');
}

describe('Redis faults: no request fails or waits for Redis, and Redis is used again when it is back', { skip: redisSkip }, () => {
  const open: { world: SharedWorld; redis: RedisServer }[] = [];
  const start = async (extra: readonly string[] = []): Promise<{ world: SharedWorld; redis: RedisServer; headers: Record<string, string> }> => {
    const redis = await startRedis(extra);
    const world = await startSharedWorld(redis, 2, CONFIG);
    open.push({ world, redis });
    return { world, redis, headers: bearer(await world.token({ expiresIn: 3600 })) };
  };
  after(async () => {
    for (const { world, redis } of open) {
      await world.close();
      await redis.close();
    }
  });

  it('survives Redis killed, and uses a Redis restarted empty again (its scripts loaded again) without a restart', async () => {
    const { world, redis, headers } = await start();
    allOk(await traffic(world, headers, 40));
    await redis.kill();
    allOk(await traffic(world, headers, 60));
    for (const gw of world.gateways) assert.equal(await metric(gw, 'hypergate_redis_up'), 0);
    assert.equal((await get(`${world.gateways[0]?.url}/api/customers/2`, headers)).status, 200);
    await redis.restart();
    await usingRedisAgain(world, headers);
    assert.ok((await metric(world.gateways[0]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' })) > 0);
  });

  it('answers every request while Redis is stopped (SIGSTOP) for 5 s, none waiting much longer than redis.timeoutMs', async () => {
    const { world, redis, headers } = await start();
    allOk(await traffic(world, headers, 20));
    redis.pause();
    let run: Run;
    try {
      run = await traffic(world, headers, 2000, 5000);
    } finally {
      redis.resume();
    }
    allOk(run);
    // A request makes a few Redis calls at most (rate decision, tier read, lock), each cut at 50 ms;
    // the breaker then stops calling. Loosely: far below the 5 s Redis was away.
    assert.ok(run.slowestMs < 1000, `slowest request ${Math.round(run.slowestMs)} ms`);
    let timeouts = 0;
    for (const op of ['rate', 'tier_read', 'lock', 'tier_write'])
      timeouts += await metric(world.gateways[0]!, 'hypergate_redis_calls_total', { op, outcome: 'timeout' });
    assert.ok(timeouts > 0, 'Redis really was asked and did not answer');
    await usingRedisAgain(world, headers);
  });

  it('makes a request wait for a stopped Redis once: its calls after one that is overdue are refused at once, not each after its own deadline', async () => {
    const redis = await startRedis();
    // Two calls that wait out their deadline in a row open this breaker.
    const world = await startSharedWorld(redis, 1, { ...CONFIG, redis: { timeoutMs: 100, breaker: { failures: 2, cooldownMs: 60_000 } } });
    open.push({ world, redis });
    const gw = world.gateways[0]!;
    const headers = bearer(await world.token({ expiresIn: 3600 }));
    assert.equal((await get(`${gw.url}/api/customers/1`, headers)).status, 200);
    await until(async () => (await metric(gw, 'hypergate_shared_cache_total', { outcome: 'stored' })) === 1, 'the first entry to be shared');
    redis.pause();
    try {
      // A rate decision, then a tier read (and the share of what was fetched): one after another.
      assert.equal((await get(`${gw.url}/api/customers/2`, headers)).status, 200);
      assert.equal(await metric(gw, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'timeout' }), 1);
      assert.equal(await metric(gw, 'hypergate_redis_breaker_state'), 0, 'only the first call waited for its deadline');
    } finally {
      redis.resume();
    }
  });

  it('keeps the final answer of a write whose Idempotency-Key claim reached a stopped Redis late: a retry is replayed, not held at 409 or run twice', async () => {
    const redis = await startRedis();
    const world = await startSharedWorld(redis, 2, { redis: { timeoutMs: 100 } });
    open.push({ world, redis });
    const writer = bearer(await world.token({ expiresIn: 3600, claims: { scope: 'customers:read customers:write' } }));
    const held = gate();
    world.upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 960, name: 'Late', status: 'active' } },
    });
    const headers = { ...writer, 'content-type': 'application/json', 'idempotency-key': '"late-claim-960"' };
    const body = '{"name":"Late","status":"active"}';
    redis.pause();
    let first: Promise<HttpAnswer>;
    try {
      // The claim is written to a Redis that answers nothing: past its deadline the write goes on without it.
      first = send(`${world.gateways[0]?.url}/api/customers`, 'POST', headers, body);
      await until(async () => world.upstream.active() === 1, 'the POST to reach the upstream unprotected');
    } finally {
      redis.resume();
    }
    // Redis now runs the late claim: the key says "in progress" until this request's answer is kept.
    await until(async () => String(await redis.command('KEYS', `${world.prefix}idem:*`)).length > 0, 'the late claim to land');
    held.open();
    assert.equal((await first).status, 201);
    const posts = (): number => world.upstream.requests.filter((r) => r.method === 'POST').length;
    await until(async () => (await send(`${world.gateways[1]?.url}/api/customers`, 'POST', headers, body)).status === 201, 'the retry to be replayed');
    assert.equal(posts(), 1, 'the retry did not reach the upstream');
  });

  it('answers every request while the pub/sub connections are cut (CLIENT KILL TYPE pubsub)', async () => {
    const { world, redis, headers } = await start();
    const cutting = (async () => {
      for (let n = 0; n < 5; n++) {
        await redis.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    allOk(await traffic(world, headers, 80));
    await cutting;
    await usingRedisAgain(world, headers);
  });

  it('answers every request with Redis at maxmemory, evicting (allkeys-lru) or refusing writes (noeviction)', async () => {
    // Large records, so a few hundred entries fill 2 MB.
    const big = 'x'.repeat(16_000);
    for (const policy of ['allkeys-lru', 'noeviction']) {
      const { world, redis, headers } = await start(['--maxmemory', '2mb', '--maxmemory-policy', policy]);
      for (const id of [...Array(20).keys()].map((k) => k + 1).concat([...Array(300).keys()].map((k) => k + nextId))) {
        world.upstream.on(`/customers/${id}`, { kind: 'json', body: { id, name: big, status: 'active' } });
      }
      allOk(await traffic(world, headers, 300));
      const info = String(await redis.command('INFO', 'stats'));
      if (policy === 'allkeys-lru') assert.match(info, /evicted_keys:[1-9]/, 'Redis evicted entries');
      // Refused whole (OOM), or from inside the script that writes (reported as ERR).
      else assert.match(String(await redis.command('INFO', 'errorstats')), /errorstat_(OOM|ERR):count=[1-9]/, 'Redis refused writes');
    }
  });
});
