import assert from 'node:assert/strict';
import { before, beforeEach, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { get, send, type HttpAnswer } from '../helpers/gateway.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { metric, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';
import { gate } from '../helpers/wait.ts';

const json = { 'content-type': 'application/json' };

/**
 * A write's final answer reaches Redis even when other calls of its instance are overdue or its
 * Redis breaker is open: a retry with the same key on another instance replays it, and the
 * upstream is asked once. Two instances; the upstream deadline is 2.5 s (a write held while the
 * test makes Redis slow stays within it on a busy machine), so a claim that is never completed
 * lapses 7.5 s after it was made (and a retry would then write again).
 */
describe('idempotency completion under slow Redis calls (Redis)', { skip: redisSkip }, () => {
  const suite = suiteWorld(2, { upstream: { timeoutMs: 2500 }, redis: { breaker: { failures: 1, cooldownMs: 60_000 } } }, ['--enable-debug-command', 'yes']);
  let redis: RedisServer;
  let world: SharedWorld;
  let writer: Record<string, string>;
  let reader: Record<string, string>;
  before(() => ({ redis, world, reader, writer } = suite.get()));
  beforeEach(() => world.upstream.reset());

  const posts = (): number => world.upstream.requests.filter((r) => r.method === 'POST').length;

  /** Retries the POST on the second instance until it is not refused as in progress (bounded); its answer. */
  async function retried(headers: Record<string, string>, body: string): Promise<HttpAnswer> {
    let answer: HttpAnswer | undefined;
    await until(async () => {
      answer = await send(world.url(1, '/api/customers'), 'POST', headers, body);
      return answer.status !== 409;
    }, 'the retry to be answered other than 409');
    return answer as HttpAnswer;
  }

  it('stores the final answer while the Redis breaker is open for ordinary calls', async () => {
    const a = world.gateways[0]!;
    const held = gate();
    world.upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 951, name: 'Once', status: 'active' } },
    });
    const headers = { ...writer, ...json, 'idempotency-key': '"completion-breaker"' };
    const body = '{"name":"Once","status":"active"}';
    const first = send(world.url(0, '/api/customers'), 'POST', headers, body);
    await until(async () => world.upstream.active() === 1, 'the POST to reach the upstream (its key claimed in Redis)');
    // One tier read that times out opens this instance's breaker (failures: 1); its cooldown runs
    // on the instance's clock, which the test does not move.
    redis.pause();
    try {
      assert.equal((await get(world.url(0, '/api/customers/77'), reader)).status, 200);
    } finally {
      redis.resume();
    }
    assert.equal(await metric(a, 'hypergate_redis_breaker_state'), 2, 'the breaker is open');
    held.open();
    const answered = await first;
    assert.equal(answered.status, 201);
    const again = await retried(headers, body);
    assert.equal(again.status, 201);
    assert.equal(again.text, answered.text);
    assert.equal(posts(), 1, 'the retry was replayed, not sent again');
    assert.equal(await metric(a, 'hypergate_idempotency_unstored_total'), 0);
  });

  it('stores the final answer while an earlier call of its instance is overdue (DEBUG SLEEP)', async () => {
    const a = world.gateways[0]!;
    // The previous test opened the breaker: a probe after its cooldown closes it again.
    world.clocks[0]?.advance(60_001);
    await until(
      async () =>
        (await get(world.url(0, `/api/customers/${100 + Math.floor(Math.random() * 800)}`), reader)).status === 200 &&
        (await metric(a, 'hypergate_redis_breaker_state')) === 0,
      'the breaker to close',
    );
    const held = gate();
    world.upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 952, name: 'Twice?', status: 'active' } },
    });
    const headers = { ...writer, ...json, 'idempotency-key': '"completion-overdue"' };
    const body = '{"name":"Twice?","status":"active"}';
    const first = send(world.url(0, '/api/customers'), 'POST', headers, body);
    await until(async () => world.upstream.active() === 1, 'the POST to reach the upstream (its key claimed in Redis)');
    const sleeper = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    try {
      await sleeper.ping();
      const timeouts = await metric(a, 'hypergate_redis_calls_total', { op: 'tier_read', outcome: 'timeout' });
      const sleeping = sleeper.call('DEBUG', 'SLEEP', '2');
      // A local miss: its tier read runs past its deadline and stays overdue while Redis sleeps.
      assert.equal((await get(world.url(0, '/api/customers/78'), reader)).status, 200);
      assert.equal(await metric(a, 'hypergate_redis_calls_total', { op: 'tier_read', outcome: 'timeout' }), timeouts + 1, 'the tier read is overdue');
      held.open();
      const answered = await first;
      assert.equal(answered.status, 201);
      await sleeping;
      const again = await retried(headers, body);
      assert.equal(again.status, 201);
      assert.equal(again.text, answered.text);
      assert.equal(posts(), 1, 'the retry was replayed, not sent again');
      assert.equal(await metric(a, 'hypergate_idempotency_unstored_total'), 0);
    } finally {
      sleeper.disconnect();
    }
  });

  it('counts a final answer Redis did not take before the claim lapsed', async () => {
    const a = world.gateways[0]!;
    const held = gate();
    world.upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 953, name: 'Lost', status: 'active' } },
    });
    const headers = { ...writer, ...json, 'idempotency-key': '"completion-lost"' };
    const first = send(world.url(0, '/api/customers'), 'POST', headers, '{"name":"Lost","status":"active"}');
    await until(async () => world.upstream.active() === 1, 'the POST to reach the upstream (its key claimed in Redis)');
    redis.pause();
    try {
      held.open();
      assert.equal((await first).status, 201);
      await until(async () => (await metric(a, 'hypergate_idempotency_unstored_total')) === 1, 'the lost answer to be counted');
    } finally {
      redis.resume();
    }
  });
});
