import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, get, problemOf, type HttpAnswer } from '../helpers/gateway.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, startSharedWorld, until, type SharedWorld } from '../helpers/shared-world.ts';

const BURST = 5;
const DAILY = 10;
const MONTHLY = 3;
const SHARED_BURST = 6;
/** Mid-day, so a spent daily quota waits 12 hours. */
const NOON = Date.UTC(2026, 10, 16, 12, 0, 0);

describe('plans across three instances on one Redis', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let world: SharedWorld;

  before(async () => {
    redis = await startRedis();
    world = await startSharedWorld(redis, 3, {
      auth: { planClaim: 'plan' },
      rateLimit: { defaultPlan: 'free' },
      plans: {
        free: { requestsPerSecond: 1000, burst: 1000 },
        bursty: { requestsPerSecond: 1, burst: BURST },
        daily: { requestsPerSecond: 1000, burst: 1000, quotas: [{ requests: DAILY, per: 'day' }] },
        monthly: { requestsPerSecond: 1000, burst: 1000, quotas: [{ requests: MONTHLY, per: 'month' }] },
        shared: { requestsPerSecond: 1, burst: SHARED_BURST },
      },
    });
    for (const clock of world.clocks) clock.advance(NOON - clock.now());
  });
  after(async () => {
    await world?.close();
    await redis?.close();
  });

  const as = async (sub: string, plan: string): Promise<Record<string, string>> => bearer(await world.token({ claims: { sub, plan } }));
  /** `count` reads, round robin over the three instances. */
  const reads = async (headers: Record<string, string>, count: number): Promise<HttpAnswer[]> => {
    const out: HttpAnswer[] = [];
    for (let n = 0; n < count; n++) out.push(await get(`${world.gateways[n % 3]?.url}/api/customers/1`, headers));
    return out;
  };
  const fallbacks = async (): Promise<number> => {
    let sum = 0;
    for (const gw of world.gateways) sum += await metric(gw, 'hypergate_rate_limit_fallback_total');
    return sum;
  };

  it("holds a plan's burst across the instances", async () => {
    const headers = await as('bursty-1', 'bursty');
    const started = Date.now();
    const statuses = (await reads(headers, 3 * BURST)).map((r) => r.status);
    // Redis's clock refills one request a second: the test's own time is the only slack.
    const refilled = Math.ceil((Date.now() - started) / 1000);
    const passed = statuses.filter((s) => s === 200).length;
    assert.ok(passed >= BURST && passed <= BURST + refilled, `${passed} passed of a burst of ${BURST} (${refilled} s elapsed)`);
    assert.ok(statuses.slice(passed).every((s) => s === 429 || s === 200));
    const refused = (await reads(headers, 1))[0] as HttpAnswer;
    assert.equal(refused.status, 429);
    assert.equal(problemOf(refused).code, 'HG_ERR_RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '1');
  });

  it('holds a daily quota across the instances, and a refusal waits for 00:00 UTC', async () => {
    const headers = await as('daily-1', 'daily');
    const before = await fallbacks();
    const answers = await reads(headers, 3 * DAILY);
    const passed = answers.filter((r) => r.status === 200).length;
    if ((await fallbacks()) === before) assert.equal(passed, DAILY, 'decided in Redis: exactly the quota');
    else assert.ok(Math.abs(passed - DAILY) <= 1000, 'within one burst of the quota');
    const refused = answers.at(-1) as HttpAnswer;
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], String(12 * 3600));
    assert.match(String(refused.headers['ratelimit']), /"daily-day";r=0;t=43200$/);
    assert.equal((await metric(world.gateways[0]!, 'hypergate_plan_requests_total', { plan: 'daily', result: 'refused', policy: 'day' })) > 0, true);
  });

  it('answers with the RateLimit fields of both policies of a plan', async () => {
    const headers = await as('daily-2', 'daily');
    const [first, second] = await reads(headers, 2);
    assert.equal(first?.status, 200);
    assert.equal(first?.headers['ratelimit-policy'], `"daily";q=1000;w=1, "daily-day";q=${DAILY};w=86400`);
    assert.equal(first?.headers['ratelimit'], `"daily";r=999;t=1, "daily-day";r=${DAILY - 1};t=43200`);
    assert.match(String(second?.headers['ratelimit']), new RegExp(`"daily-day";r=${DAILY - 2};t=43200$`));
  });

  it('refuses a spent monthly quota until the first of the next month, 00:00 UTC', async () => {
    // 90 s before February 2027.
    const nearEnd = Date.UTC(2027, 0, 31, 23, 58, 30);
    for (const clock of world.clocks) clock.advance(nearEnd - clock.now());
    const headers = await as('monthly-1', 'monthly');
    const answers = await reads(headers, MONTHLY + 1);
    assert.deepEqual(
      answers.map((r) => r.status),
      [...Array<number>(MONTHLY).fill(200), 429],
    );
    const refused = answers.at(-1) as HttpAnswer;
    assert.equal(refused.headers['retry-after'], '90');
    assert.equal(refused.headers['ratelimit-policy'], `"monthly";q=1000;w=1, "monthly-month";q=${MONTHLY};w=${31 * 86400}`);
    assert.match(String(refused.headers['ratelimit']), /"monthly-month";r=0;t=90$/);
    // A new month, a new count.
    for (const clock of world.clocks) clock.advance(90_000);
    const next = await reads(await as('monthly-1', 'monthly'), 1);
    assert.equal(next[0]?.status, 200);
  });

  it('keeps the keys of one decision in one hash slot, with the quota beside its bucket', async () => {
    const keys = (await redis.command('KEYS', `${world.prefix}pl:*monthly-1*`)) as string[];
    assert.ok(keys.length >= 2, keys.join(', '));
    for (const key of keys) assert.match(key, /pl:\{[^}]+:s:monthly-1\}:p:monthly/);
  });

  it("falls back to each instance's share of the plan when Redis does not answer, and counts it", async () => {
    const counted = async (i: number): Promise<boolean> => (await metric(world.gateways[i]!, 'hypergate_redis_instances')) === 3;
    await until(async () => (await counted(0)) && (await counted(1)) && (await counted(2)), 'the three instances to count each other');
    const headers = await as('shared-1', 'shared');
    const before = await fallbacks();
    redis.pause();
    try {
      // Each instance alone holds a third of the burst (2 requests): together they stay within one burst.
      const statuses = (await reads(headers, 3 * SHARED_BURST)).map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, SHARED_BURST);
    } finally {
      redis.resume();
    }
    assert.ok((await fallbacks()) - before >= SHARED_BURST);
  });
});
