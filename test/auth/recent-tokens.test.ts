import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Client } from 'undici';
import { recentSlot } from '../../src/auth/token-cache.ts';
import { mergeConfig } from '../../src/config/load.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { configWith } from '../../src/gateway/load-config.ts';

/**
 * The verifier keeps the tokens used lately whole, one per slot (verifier.ts, recent-token
 * table): a request whose token is there skips the digest. Every request is still authorized on
 * its own: by its own token, at the clock's time, under the running verification settings.
 */
describe('the recent-token table', () => {
  let fx: Fixture;
  let client: Client;
  let connects: number;
  before(async () => {
    fx = await startFixture({ auth: { clockToleranceSeconds: 0 } });
  });
  after(() => fx.close());
  beforeEach(() => {
    // One connection (no pipelining): every request below travels on the same socket.
    client = new Client(fx.gw.url, { pipelining: 1 });
    connects = 0;
    client.on('connect', () => connects++);
  });
  afterEach(() => client.close());

  async function status(token: string): Promise<number> {
    const res = await client.request({ method: 'GET', path: '/api/customers/1', headers: { authorization: `Bearer ${token}` } });
    await res.body.dump();
    return res.statusCode;
  }

  test('two tokens of one slot, taking turns, are each answered as their own', async () => {
    // Enough of each kind that two of them share a slot (of 65,536): ~10 pairs expected among 800 × 800.
    const readers = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; i < 2000 && pair === undefined; i++) {
      const reader = await fx.token({ claims: { sub: `reader-${i}` } });
      readers.set(recentSlot(reader), reader);
      const other = await fx.token({ claims: { sub: `other-${i}`, scope: 'orders:read' } });
      const same = readers.get(recentSlot(other));
      if (same !== undefined) pair = [same, other];
    }
    assert.ok(pair !== undefined, 'no two tokens shared a slot');
    const [reader, other] = pair;
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push(await status(reader), await status(reader), await status(other), await status(other));
    assert.deepEqual(answers, [200, 200, 403, 403, 200, 200, 403, 403, 200, 200, 403, 403]);
  });

  test('tokens taking turns on one connection are each answered as their own', async () => {
    const reader = await fx.token({ claims: { sub: 'reader' } });
    const other = await fx.token({ claims: { sub: 'other', scope: 'orders:read' } });
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push(await status(reader), await status(reader), await status(other), await status(other));
    assert.deepEqual(answers, [200, 200, 403, 403, 200, 200, 403, 403, 200, 200, 403, 403]);
    assert.equal(connects, 1);
  });

  test('a token changed in one character after the one the connection brought is verified, and refused', async () => {
    const token = await fx.token();
    const [head, payload, signature] = token.split('.') as [string, string, string];
    const flip = (s: string, at: number): string => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
    for (let i = 0; i < 3; i++) assert.equal(await status(token), 200);
    assert.equal(await status(`${head}.${payload}.${flip(signature, 40)}`), 401);
    assert.equal(await status(token), 200);
    assert.equal(await status(`${head}.${flip(payload, 10)}.${signature}`), 401);
    assert.equal(await status(token), 200);
    assert.equal(connects, 1);
  });

  test("the connection's token stops working at its exp", async () => {
    const token = await fx.token({ expiresIn: 30 });
    for (let i = 0; i < 3; i++) assert.equal(await status(token), 200);
    fx.clock.advance(29_000);
    assert.equal(await status(token), 200);
    fx.clock.advance(1_000);
    assert.equal(await status(token), 401);
    assert.equal(connects, 1);
  });

  test("a reload that changes how tokens are verified verifies the connection's token again", async () => {
    const token = await fx.token();
    for (let i = 0; i < 3; i++) assert.equal(await status(token), 200);
    const before = fx.gw.gateway.config;
    await fx.gw.gateway.reload(configWith(mergeConfig(before, { auth: { issuer: 'https://issuer.elsewhere.example' } })));
    try {
      assert.equal(await status(token), 401);
    } finally {
      await fx.gw.gateway.reload(before);
    }
    assert.equal(await status(token), 200);
    assert.equal(connects, 1);
  });
});
