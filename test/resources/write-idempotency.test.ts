import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryIdempotencyStore, type IdempotencyStore, type IdempotentAnswer } from '../../src/cluster/idempotency.ts';
import { HgError } from '../../src/lib/errors.ts';
import { problemBody } from '../../src/protocol/problem.ts';
import { fingerprintOf, IdempotencyClaim, idempotencyScope, isFinalRefusal, type KeyedWrite } from '../../src/resources/write-idempotency.ts';
import { ManualClock } from '../helpers/clock.ts';
import { captureLog } from '../helpers/log.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { suiteWorld, until } from '../helpers/shared-world.ts';

const ANSWER: IdempotentAnswer = { status: 201, headers: { 'Content-Type': 'application/json', Location: '/api/customers/9' }, body: '{"id":9}' };

let n = 0;
/** A write with a key of its own (so tests on one store never meet). */
function keyed(fingerprint = 'POST /api/customers {}'): KeyedWrite {
  n++;
  return { scope: 'sub:alice', key: `key-${n}`, fingerprint, ttlSeconds: 60 };
}

/** Claims the key; fails the test when the store answered with a replay instead. */
async function claimed(store: IdempotencyStore, write: KeyedWrite): Promise<IdempotencyClaim> {
  const begun = await IdempotencyClaim.begin(store, write, captureLog().logger, 'req-1');
  assert.ok(begun instanceof IdempotencyClaim, `a claim, not a replay of ${JSON.stringify(begun)}`);
  return begun;
}

async function refusedWith(code: string, run: Promise<unknown>): Promise<void> {
  await assert.rejects(run, (err: unknown) => err instanceof HgError && err.code === code);
}

describe('which write outcomes are final under an Idempotency-Key', () => {
  it('keeps the refusals whose outcome is known (400, 404, 409, 412, 422, 428) and no other status', () => {
    for (const status of [400, 404, 409, 412, 422, 428]) assert.equal(isFinalRefusal(status), true, String(status));
    for (const status of [401, 403, 429, 500, 502, 503, 504]) assert.equal(isFinalRefusal(status), false, String(status));
  });

  it('fingerprints a request by method, path and body bytes', () => {
    const body = Buffer.from('{"name":"A"}');
    assert.equal(fingerprintOf('POST', '/api/customers', body), fingerprintOf('POST', '/api/customers', Buffer.from('{"name":"A"}')));
    assert.notEqual(fingerprintOf('POST', '/api/customers', body), fingerprintOf('PATCH', '/api/customers', body));
    assert.notEqual(fingerprintOf('POST', '/api/customers', body), fingerprintOf('POST', '/api/orders', body));
    assert.notEqual(fingerprintOf('POST', '/api/customers', body), fingerprintOf('POST', '/api/customers', Buffer.from('{"name":"B"}')));
  });

  it("scopes a key to the token's subject, or without one to the token itself", () => {
    assert.equal(idempotencyScope('Bearer a', 'alice'), 'sub:alice');
    assert.equal(idempotencyScope('Bearer b', 'alice'), 'sub:alice');
    assert.equal(idempotencyScope('Bearer a', undefined), idempotencyScope('Bearer a', undefined));
    assert.notEqual(idempotencyScope('Bearer a', undefined), idempotencyScope('Bearer b', undefined));
    assert.match(idempotencyScope('Bearer a', undefined), /^token:[\w-]+$/);
  });

  it('without a key keeps nothing, whatever the outcome', async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 100, maxBytes: 1 << 20 }, 5000, new ManualClock());
    const claim = await IdempotencyClaim.begin(store, null, captureLog().logger, 'req-1');
    assert.equal(claim, IdempotencyClaim.NONE);
    await IdempotencyClaim.NONE.final(ANSWER);
    await IdempotencyClaim.NONE.refused(new HgError('HG_ERR_CONFLICT'));
    await IdempotencyClaim.NONE.unknown();
    assert.equal(store.size, 0);
  });
});

/** What the wrapper does with each outcome, on a store (`stores` gives two handles on one store: two instances, for Redis). */
function contract(name: string, skip: string | false, stores: () => readonly [IdempotencyStore, IdempotencyStore]): void {
  describe(`the Idempotency-Key wrapper: ${name}`, { skip }, () => {
    it('replays a final answer to a retry, byte for byte', async () => {
      const [a, b] = stores();
      const write = keyed();
      await (await claimed(a, write)).final(ANSWER);
      assert.deepEqual(await IdempotencyClaim.begin(b, write, captureLog().logger, 'req-2'), ANSWER);
    });

    it('answers 409 to a retry while the first request runs, and 422 to the key used for another request', async () => {
      const [a, b] = stores();
      const write = keyed();
      await claimed(a, write);
      await refusedWith('HG_ERR_IDEMPOTENCY_KEY_IN_USE', IdempotencyClaim.begin(b, write, captureLog().logger, 'req-2'));
      await refusedWith('HG_ERR_IDEMPOTENCY_KEY_REUSED', IdempotencyClaim.begin(b, { ...write, fingerprint: 'another body' }, captureLog().logger, 'req-2'));
    });

    it('keeps a final refusal as the problem answer the first request got, and replays it', async () => {
      const [a, b] = stores();
      const write = keyed();
      const err = new HgError('HG_ERR_CONFLICT', { detail: 'Taken.' });
      await (await claimed(a, write)).refused(err);
      const replay = await IdempotencyClaim.begin(b, write, captureLog().logger, 'req-2');
      assert.deepEqual(replay, {
        status: 409,
        headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' },
        body: JSON.stringify(problemBody(err)),
      });
    });

    it('lets a retry run again after an unknown outcome (a 5xx, a time-out), and keeps a final upstream refusal', async () => {
      const [a, b] = stores();
      const unknown = keyed();
      await (await claimed(a, unknown)).upstreamRefused(502, new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY'));
      await claimed(b, unknown);

      const timedOut = keyed();
      await (await claimed(a, timedOut)).unknown();
      await claimed(b, timedOut);

      const final = keyed();
      await (await claimed(a, final)).upstreamRefused(422, new HgError('HG_ERR_UNPROCESSABLE'));
      const replay = await IdempotencyClaim.begin(b, final, captureLog().logger, 'req-2');
      assert.equal((replay as IdempotentAnswer).status, 422);
    });

    it('never drops a final answer when told the outcome was unknown afterwards', async () => {
      const [a, b] = stores();
      const write = keyed();
      const claim = await claimed(a, write);
      await claim.final(ANSWER);
      await claim.unknown();
      assert.deepEqual(await IdempotencyClaim.begin(b, write, captureLog().logger, 'req-2'), ANSWER);
    });
  });
}

const memory = new MemoryIdempotencyStore({ maxEntries: 1000, maxBytes: 1 << 20 }, 5000, new ManualClock());
contract('in memory', false, () => [memory, memory]);

// In Redis: two gateways' stores (two connections), as two instances would use them.
describe('the Idempotency-Key wrapper in Redis', { skip: redisSkip }, () => {
  const shared = suiteWorld(2);
  const redis = (): RedisServer => shared.redis();
  const stores = (): readonly [IdempotencyStore, IdempotencyStore] => [
    shared.world().gateways[0]!.gateway.shared.idempotency,
    shared.world().gateways[1]!.gateway.shared.idempotency,
  ];
  contract('in Redis, across two instances', redisSkip, stores);

  /** Claims `write` while Redis answers nothing: the claim may reach Redis late, once it is resumed. */
  async function claimWhilePaused(store: IdempotencyStore, write: KeyedWrite): Promise<{ claim: IdempotencyClaim; warnings: Record<string, unknown>[] }> {
    const log = captureLog();
    redis().pause();
    let begun: IdempotencyClaim | IdempotentAnswer;
    try {
      begun = await IdempotencyClaim.begin(store, write, log.logger, 'req-paused');
    } finally {
      redis().resume();
    }
    assert.ok(begun instanceof IdempotencyClaim, 'the write goes on without a record');
    return { claim: begun, warnings: log.records().filter((r) => r['event'] === 'idempotency') };
  }

  /** What a second instance finds for the key once Redis answers again. */
  async function seenOnceResumed(store: IdempotencyStore, write: KeyedWrite): Promise<string> {
    let state = 'unavailable';
    await until(async () => {
      state = (await store.begin(write.scope, write.key, write.fingerprint, write.ttlSeconds)).state;
      return state !== 'unavailable';
    }, 'Redis to answer again');
    return state;
  }

  it('goes on without a record when Redis does not answer, says so in the log, and still keeps a final answer', async () => {
    const [a, b] = stores();
    const write = keyed();
    const { claim, warnings } = await claimWhilePaused(a, write);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!['reqId'], 'req-paused');
    // The late claim holds the key "in progress" until the final answer is kept over it.
    assert.equal(await seenOnceResumed(b, write), 'in-progress');
    await claim.final(ANSWER);
    assert.deepEqual(await IdempotencyClaim.begin(b, write, captureLog().logger, 'req-2'), ANSWER);
  });

  it("leaves a claim it only may have made to its lease when the outcome is unknown: dropping it could drop another request's", async () => {
    const [a, b] = stores();
    const write = keyed();
    const { claim } = await claimWhilePaused(a, write);
    assert.equal(await seenOnceResumed(b, write), 'in-progress');
    await claim.unknown();
    await refusedWith('HG_ERR_IDEMPOTENCY_KEY_IN_USE', IdempotencyClaim.begin(b, write, captureLog().logger, 'req-2'));
  });
});
