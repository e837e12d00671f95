import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { GrowingLru } from '../../src/lib/growing-lru.ts';
import { RateLimiter } from '../../src/auth/rate-limit.ts';
import { MemoryIdempotencyStore } from '../../src/cluster/idempotency.ts';
import { systemClock } from '../../src/lib/clock.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes of heap and of array buffers (typed arrays live outside the heap) still held after `make` returns. */
function heapHeldBy(make: () => unknown): number {
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  gc();
  const before = used();
  const kept = make();
  gc();
  const held = used() - before;
  assert.ok(kept !== undefined);
  return held;
}

describe('GrowingLru: bounded LRUs that take memory as they fill, not up front', () => {
  test('the count bound evicts the least recently used entry and disposes of it', () => {
    const evicted: string[] = [];
    const lru = new GrowingLru<string, number>(3, { dispose: (_v, k, reason) => evicted.push(`${k}:${reason}`) });
    for (const k of ['a', 'b', 'c']) lru.set(k, 1);
    lru.get('a');
    lru.set('d', 1);
    assert.deepEqual([...lru.keys()].sort(), ['a', 'c', 'd']);
    assert.deepEqual(evicted, ['b:evict']);
    assert.equal(lru.size, 3);
  });

  test('with maxSize, both the byte and the count bound hold', () => {
    const lru = new GrowingLru<string, string>(4, { maxSize: 10, sizeCalculation: (v) => v.length });
    lru.set('a', 'xxxx');
    lru.set('b', 'xxxx');
    lru.set('c', 'xxxx');
    assert.equal(lru.has('a'), false, 'a third 4-byte entry passes 10 bytes: the oldest goes');
    assert.equal(lru.calculatedSize, 8);
    for (const k of ['d', 'e', 'f', 'g']) lru.set(k, 'x');
    assert.equal(lru.size, 4, 'small entries stop at the count bound');
  });

  test('entries with a TTL expire, and the TTL arrays grow with the entries, not with the bound', () => {
    let now = 1000;
    const lru = new GrowingLru<string, number>(10, { ttlAutopurge: false, ttlResolution: 0, perf: { now: () => now } });
    lru.set('a', 1, { ttl: 50 });
    assert.equal(lru.get('a'), 1);
    now += 51;
    assert.equal(lru.get('a'), undefined);
    const held = heapHeldBy(() => new GrowingLru<string, number>(1_000_000, { ttlAutopurge: false }).set('a', 1, { ttl: 50 }));
    assert.ok(held < 2 ** 20, `held ${held} bytes after one entry with a TTL (lru-cache sized by max takes 16 MB more for them)`);
  });

  test('a bound of a million entries costs well under a megabyte until entries come (a preallocating LRU holds ~28 MB)', () => {
    const held = heapHeldBy(() => new GrowingLru<string, number>(1_000_000));
    assert.ok(held < 2 ** 20, `held ${held} bytes`);
  });

  test('without maxSize every entry weighs 1: a size given to set() is refused, as it would break the count bound', () => {
    const lru = new GrowingLru<string, number>(3);
    assert.throws(() => lru.set('a', 1, { size: 3 }), TypeError);
  });

  test('the idempotency store and the rate limiter, at a million entries each, take nothing up front either', () => {
    const store = heapHeldBy(() => new MemoryIdempotencyStore({ maxEntries: 1_000_000, maxBytes: 2 ** 30 }, 60_000, systemClock));
    assert.ok(store < 2 ** 20, `idempotency store held ${store} bytes`);
    const limiter = heapHeldBy(() => RateLimiter.create({ requestsPerSecond: 10, burst: 20, maxKeys: 1_000_000 }, systemClock));
    assert.ok(limiter < 2 ** 20, `rate limiter held ${limiter} bytes`);
  });
});
