import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../helpers/clock.ts';
import { MemoryIdempotencyStore, type IdempotencyStore } from '../../src/cluster/idempotency.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { suiteWorld, type SharedWorld } from '../helpers/shared-world.ts';

const ANSWER = { status: 201, headers: { location: '/api/customers/9', etag: '"v1"' }, body: '{"id":9}' };

/** The contract both stores keep; `stores` gives two handles on one store (two instances, for Redis). */
function contract(name: string, skip: string | false, stores: () => readonly [IdempotencyStore, IdempotencyStore]): void {
  describe(`idempotency records: ${name}`, { skip }, () => {
    it('claims a new key, says in-progress to a second request with it, and replays the completed answer', async () => {
      const [a, b] = stores();
      assert.deepEqual(await a.begin('alice', 'k1', 'POST /api/customers {}', 60), { state: 'new' });
      assert.deepEqual(await b.begin('alice', 'k1', 'POST /api/customers {}', 60), { state: 'in-progress' });
      await a.complete('alice', 'k1', 'POST /api/customers {}', ANSWER, 60);
      assert.deepEqual(await b.begin('alice', 'k1', 'POST /api/customers {}', 60), { state: 'completed', answer: ANSWER });
    });

    it('says mismatch for the same key with another request, running or finished', async () => {
      const [a, b] = stores();
      await a.begin('alice', 'k2', 'fingerprint one', 60);
      assert.deepEqual(await b.begin('alice', 'k2', 'fingerprint two', 60), { state: 'mismatch' });
      await a.complete('alice', 'k2', 'fingerprint one', ANSWER, 60);
      assert.deepEqual(await b.begin('alice', 'k2', 'fingerprint two', 60), { state: 'mismatch' });
    });

    it("keeps each subject's keys apart", async () => {
      const [a, b] = stores();
      await a.begin('alice', 'k3', 'f', 60);
      assert.deepEqual(await b.begin('bob', 'k3', 'f', 60), { state: 'new' });
    });

    it('forgets an abandoned claim so a retry may run, but never a completed record', async () => {
      const [a, b] = stores();
      await a.begin('alice', 'k4', 'f', 60);
      await a.abandon('alice', 'k4', 'f');
      assert.deepEqual(await b.begin('alice', 'k4', 'f', 60), { state: 'new' });
      await b.complete('alice', 'k4', 'f', ANSWER, 60);
      await a.abandon('alice', 'k4', 'f');
      assert.equal((await a.begin('alice', 'k4', 'f', 60)).state, 'completed');
    });
  });
}

// In memory: one process, an injected clock for the TTLs.
const clock = new ManualClock();
let memory = new MemoryIdempotencyStore({ maxEntries: 1000, maxBytes: 1 << 20 }, 5000, clock);
contract('in memory', false, () => [memory, memory]);

describe('idempotency records in memory: bounds', () => {
  it('lets an unfinished claim lapse after its lease and a completed record after its TTL', async () => {
    memory = new MemoryIdempotencyStore({ maxEntries: 1000, maxBytes: 1 << 20 }, 5000, clock);
    await memory.begin('alice', 'lapse', 'f', 60);
    clock.advance(5001);
    assert.deepEqual(await memory.begin('alice', 'lapse', 'f', 60), { state: 'new' });
    await memory.complete('alice', 'lapse', 'f', ANSWER, 60);
    clock.advance(59_000);
    assert.equal((await memory.begin('alice', 'lapse', 'f', 60)).state, 'completed');
    clock.advance(1001);
    assert.equal((await memory.begin('alice', 'lapse', 'f', 60)).state, 'new');
  });

  it('keeps at most idempotency.maxEntries records', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, maxBytes: 1 << 20 }, 5000, clock);
    for (let n = 0; n < 10; n++) await small.begin('alice', `k${n}`, 'f', 60);
    assert.equal(small.size, 3);
  });

  it('keeps the records within idempotency.maxBytes, large answers counted whole: the oldest go first', async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 1000, maxBytes: 100_000 }, 5000, clock);
    const large = { ...ANSWER, body: 'x'.repeat(30_000) };
    for (let n = 0; n < 10; n++) {
      await store.begin('alice', `big${n}`, 'f', 60);
      await store.complete('alice', `big${n}`, 'f', large, 60);
    }
    assert.equal(store.size, 3, 'three 30 kB answers fit in 100 kB, not ten');
    assert.ok(store.bytes > 90_000 && store.bytes <= 100_000, `${store.bytes} bytes`);
    assert.equal((await store.begin('alice', 'big9', 'f', 60)).state, 'completed', 'the newest is kept');
    assert.equal((await store.begin('alice', 'big0', 'f', 60)).state, 'new', 'the oldest went first');
  });

  it("keeps each subject within maxBytesPerSubject: its own oldest records go, another subject's stay", async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 1000, maxBytes: 1 << 20, maxBytesPerSubject: 100_000 }, 5000, clock);
    const large = { ...ANSWER, body: 'x'.repeat(30_000) };
    await store.begin('bob', 'one', 'f', 60);
    await store.complete('bob', 'one', 'f', ANSWER, 60);
    for (let n = 0; n < 10; n++) {
      await store.begin('alice', `big${n}`, 'f', 60);
      await store.complete('alice', `big${n}`, 'f', large, 60);
    }
    assert.ok(store.bytesOf('alice') <= 100_000, `${store.bytesOf('alice')} bytes`);
    assert.equal((await store.begin('alice', 'big9', 'f', 60)).state, 'completed', 'the newest is kept');
    assert.equal((await store.begin('alice', 'big0', 'f', 60)).state, 'new', 'her oldest went first');
    assert.equal((await store.begin('bob', 'one', 'f', 60)).state, 'completed', "bob's record stayed");
  });

  it('counts an answer with a character past U+00FF at the two bytes a character it holds in memory', async () => {
    const charged = async (body: string): Promise<number> => {
      const store = new MemoryIdempotencyStore({ maxEntries: 10, maxBytes: 1 << 20 }, 5000, clock);
      await store.begin('alice', 'k', 'f', 60);
      await store.complete('alice', 'k', 'f', { ...ANSWER, body }, 60);
      return store.bytes;
    };
    const ascii = `{"name":"${'a'.repeat(1000)}"}`;
    const wide = `{"name":"${'a'.repeat(999)}Ω"}`;
    assert.equal((await charged(wide)) - (await charged(ascii)), wide.length);
  });
});

// In Redis: two gateways' stores (two connections), as two instances would use them.
describe('idempotency records in Redis', { skip: redisSkip }, () => {
  const shared = suiteWorld(2);
  const world = (): SharedWorld => shared.world();
  const redis = (): RedisServer => shared.redis();
  contract('in Redis, across two instances', redisSkip, () => [
    world().gateways[0]!.gateway.shared.idempotency,
    world().gateways[1]!.gateway.shared.idempotency,
  ]);

  it('keeps each record with its TTL in Redis, and says unavailable when Redis does not answer', async () => {
    const store = world().gateways[0]!.gateway.shared.idempotency;
    await store.begin('alice', 'ttl', 'f', 60);
    await store.complete('alice', 'ttl', 'f', ANSWER, 60);
    const keys = (await redis().command('KEYS', `${world().prefix}idem:*`)) as string[];
    const ttls = await Promise.all(keys.map((k) => redis().command('PTTL', k) as Promise<number>));
    assert.ok(
      ttls.every((t) => t > 0 && t <= 60_000),
      String(ttls),
    );
    redis().pause();
    try {
      assert.deepEqual(await store.begin('alice', 'paused', 'f', 60), { state: 'unavailable' });
    } finally {
      redis().resume();
    }
  });
});
