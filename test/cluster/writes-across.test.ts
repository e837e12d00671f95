import assert from 'node:assert/strict';
import { before, beforeEach, describe, it } from 'node:test';
import { assertProblem } from '../helpers/hostile.ts';
import { get, send } from '../helpers/gateway.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { metric, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';
import { gate } from '../helpers/wait.ts';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };

/** Writes on one instance as the others see them: two gateways, one real Redis, one upstream. */
describe('writes across instances (Redis)', { skip: redisSkip }, () => {
  const suite = suiteWorld(2);
  let redis: RedisServer;
  let world: SharedWorld;
  let reader: Record<string, string>;
  let writer: Record<string, string>;
  before(() => ({ redis, world, reader, writer } = suite.get()));
  beforeEach(() => world.upstream.reset());

  const cached = (i: number, path: string): boolean => world.gateways[i]?.gateway.cache.get(path) !== undefined;
  const posts = (): number => world.upstream.requests.filter((r) => r.method === 'POST').length;

  it('a PATCH on one instance drops the item from the other within a second, and its next read is the new one', async () => {
    for (const i of [0, 1]) assert.equal(((await get(world.url(i, '/api/customers/12'), reader)).json() as { name: string }).name, 'Customer 12');
    assert.ok(cached(1, '/api/customers/12'));
    const renamed = { id: 12, name: 'Renamed', status: 'active' };
    world.upstream.on('PATCH /customers/12', { kind: 'json', body: renamed, headers: { etag: '"v2"' } });
    world.upstream.on('GET /customers/12', { kind: 'json', body: renamed, headers: { etag: '"v2"' } });
    const patched = await send(world.url(0, '/api/customers/12'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"name":"Renamed"}');
    assert.equal(patched.status, 200);
    await until(async () => !cached(1, '/api/customers/12'), 'the other instance to drop the item', 1000);
    const read = await get(world.url(1, '/api/customers/12'), reader);
    assert.equal((read.json() as { name: string }).name, 'Renamed');
    assert.equal(read.headers['etag'], patched.headers['etag'], 'both instances derive one validator from the upstream one');
  });

  it('a DELETE on one instance drops what lies below the item on the other (its orders)', async () => {
    assert.equal((await get(world.url(1, '/api/customers/13/orders'), reader)).status, 200);
    world.upstream.on('DELETE /customers/13', { kind: 'raw', status: 204, body: '' });
    assert.equal((await send(world.url(0, '/api/customers/13'), 'DELETE', { ...writer, 'if-match': '*' })).status, 204);
    await until(async () => !cached(1, '/api/customers/13/orders'), 'the other instance to drop the orders', 1000);
  });

  it("replays an Idempotency-Key's answer on another instance without reaching the upstream again", async () => {
    world.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'Once', status: 'active' } });
    const headers = { ...writer, ...json, 'idempotency-key': '"across-901"' };
    const first = await send(world.url(0, '/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
    const again = await send(world.url(1, '/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(again.headers['location'], '/api/customers/901');
    assert.equal(posts(), 1, 'the second instance sent nothing');
    assertProblem(await send(world.url(1, '/api/customers'), 'POST', headers, '{"name":"Other","status":"active"}'), {
      status: 422,
      code: 'HG_ERR_IDEMPOTENCY_KEY_REUSED',
    });
    assert.equal(posts(), 1);
  });

  it('answers 409 on another instance while the first request with the key still runs', async () => {
    const held = gate();
    world.upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 902, name: 'Slow', status: 'active' } },
    });
    const headers = { ...writer, ...json, 'idempotency-key': '"across-902"' };
    const first = send(world.url(0, '/api/customers'), 'POST', headers, '{"name":"Slow","status":"active"}');
    await until(async () => world.upstream.active() === 1, 'the first POST to reach the upstream');
    assertProblem(await send(world.url(1, '/api/customers'), 'POST', headers, '{"name":"Slow","status":"active"}'), {
      status: 409,
      code: 'HG_ERR_IDEMPOTENCY_KEY_IN_USE',
    });
    held.open();
    assert.equal((await first).status, 201);
    const replayed = await send(world.url(1, '/api/customers'), 'POST', headers, '{"name":"Slow","status":"active"}');
    assert.equal(replayed.status, 201);
    assert.equal(posts(), 1);
  });

  it('answers a write with an Idempotency-Key without waiting for a stalled Redis to keep its record', async () => {
    const a = world.gateways[0]!;
    const held = gate();
    world.upstream.on('POST /customers', {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', status: 201, body: { id: 903, name: 'Stalled', status: 'active' } },
    });
    const headers = { ...writer, ...json, 'idempotency-key': '"across-903"' };
    const first = send(world.url(0, '/api/customers'), 'POST', headers, '{"name":"Stalled","status":"active"}');
    await until(async () => world.upstream.active() === 1, 'the POST to reach the upstream (its key claimed in Redis)');
    const gaveUp = await metric(a, 'hypergate_redis_calls_total', { op: 'idempotency', outcome: 'timeout' });
    redis.pause();
    try {
      held.open();
      assert.equal((await first).status, 201);
      // The record is kept after the answer (its call may wait 10 × redis.timeoutMs): it has not given up yet.
      assert.equal(await metric(a, 'hypergate_redis_calls_total', { op: 'idempotency', outcome: 'timeout' }), gaveUp);
    } finally {
      redis.resume();
    }
  });
});
