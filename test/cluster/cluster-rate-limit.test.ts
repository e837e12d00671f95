import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { redisSkip, type RedisServer } from '../helpers/redis.ts';
import { metric, suiteWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

const BURST = 5;

describe('cluster rate limits (rateLimit.scope "cluster")', { skip: redisSkip }, () => {
  // Each test is its own client address (X-Forwarded-For from a trusted proxy): a token not yet
  // verified is charged to its address before the crypto, so tests sharing 127.0.0.1 would share a bucket.
  const suite = suiteWorld(2, { rateLimit: { requestsPerSecond: 1, burst: BURST }, server: { trustProxy: ['127.0.0.1'] } });
  let redis: RedisServer;
  let world: SharedWorld;
  before(() => ({ redis, world } = suite.get()));

  let clients = 0;
  const as = async (sub: string): Promise<Record<string, string>> => ({
    ...bearer(await world.token({ claims: { sub } })),
    'x-forwarded-for': `10.0.0.${++clients}`,
  });
  const statuses = async (headers: Record<string, string>, count: number): Promise<number[]> => {
    const out: number[] = [];
    for (let n = 0; n < count; n++) out.push((await get(`${world.gateways[n % 2]?.url}/api/customers/1`, headers)).status);
    return out;
  };
  const rateCalls = async (i: number): Promise<number> => metric(world.gateways[i]!, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' });

  it('answers over the limit with the same 429 problem and headers as the local limiter', async () => {
    const headers = await as('limited');
    await statuses(headers, BURST);
    const res = await get(`${world.gateways[0]?.url}/api/customers/1`, headers);
    assert.equal(res.status, 429);
    assert.equal(problemOf(res).code, 'HG_ERR_RATE_LIMITED');
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['ratelimit-policy'], `"default";q=${BURST};w=${BURST}`);
    assert.equal(res.headers['ratelimit'], '"default";r=0;t=1');
  });

  it('remembers a refusal until it expires, so a client hammering at 429 costs no Redis call', async () => {
    const headers = await as('hammering');
    await statuses(headers, BURST + 2);
    const before = [await rateCalls(0), await rateCalls(1)];
    assert.deepEqual(await statuses(headers, 20), Array(20).fill(429));
    assert.deepEqual([await rateCalls(0), await rateCalls(1)], before);
  });

  it('loads its script again when Redis forgot it (SCRIPT FLUSH, as a restart does)', async () => {
    const headers = await as('after-flush');
    await redis.command('SCRIPT', 'FLUSH');
    const fallbacks = await metric(world.gateways[0]!, 'hypergate_rate_limit_fallback_total');
    assert.deepEqual(await statuses(headers, BURST + 1), [...Array<number>(BURST).fill(200), 429]);
    assert.equal(await metric(world.gateways[0]!, 'hypergate_rate_limit_fallback_total'), fallbacks, 'decided in Redis, not locally');
  });

  it("falls back to this instance's share of the limit when Redis does not answer, and counts it", async () => {
    const headers = await as('while-paused');
    const counted = async (i: number): Promise<boolean> => (await metric(world.gateways[i]!, 'hypergate_redis_instances')) === 2;
    await until(async () => (await counted(0)) && (await counted(1)), 'both instances to count each other');
    redis.pause();
    try {
      // Each instance alone holds half the burst (2.5 requests: 2 pass): fail open, but the two
      // together stay within one limit instead of passing one burst each.
      const got = await statuses(headers, 2 * BURST + 4);
      assert.equal(got.filter((s) => s === 200).length, 2 * Math.floor(BURST / 2));
    } finally {
      redis.resume();
    }
    assert.ok((await metric(world.gateways[0]!, 'hypergate_rate_limit_fallback_total')) >= BURST);
  });

  it('charges an address only for failed authentication, and refuses its unverified tokens before any crypto once it is over', async () => {
    const address = { 'x-forwarded-for': `10.0.1.${++clients}` };
    const on = (i: number, token: string): Promise<number> =>
      get(`${world.gateways[i]?.url}/api/customers/1`, { ...bearer(token), ...address }).then((a) => a.status);
    const users = await Promise.all(Array.from({ length: 3 * BURST }, (_, i) => world.token({ claims: { sub: `behind-nat-${i}` } })));
    assert.deepEqual(await Promise.all(users.map((t, i) => on(i % 2, t))), Array(3 * BURST).fill(200));
    // Signed ahead: the failures follow each other well within one refill (a second).
    const forged = await Promise.all(
      Array.from({ length: BURST + 1 }, async (_, i) => `${(await world.token({ claims: { sub: `forger-${i}` } })).slice(0, -6)}AAAAAA`),
    );
    for (let i = 0; i < BURST; i++) assert.equal(await on(0, forged[i]!), 401);
    const invalid = await metric(world.gateways[0]!, 'hypergate_token_verifications_total', { result: 'invalid' });
    assert.equal(await on(0, forged[BURST]!), 429);
    assert.equal(await metric(world.gateways[0]!, 'hypergate_token_verifications_total', { result: 'invalid' }), invalid, 'refused before any crypto');
    assert.deepEqual(await Promise.all(users.map((t, i) => on(i % 2, t))), Array(3 * BURST).fill(200), 'valid tokens never paid');
  });

  it('limits each instance on its own with rateLimit.scope "instance", without asking Redis', async () => {
    const local = await world.add({ rateLimit: { scope: 'instance' } });
    const headers = await as('local');
    for (let n = 0; n < BURST; n++) assert.equal((await get(`${local.url}/api/customers/1`, headers)).status, 200);
    assert.equal((await get(`${local.url}/api/customers/1`, headers)).status, 429);
    assert.equal(await metric(local, 'hypergate_redis_calls_total', { op: 'rate', outcome: 'ok' }), 0);
  });
});
