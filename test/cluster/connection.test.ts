import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { redactUrl } from '../../src/config/redact.ts';
import { configProblems } from '../helpers/config.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.ts';
import { metric, STEADY_REDIS, until } from '../helpers/shared-world.ts';

const PASSWORD = 'pw-9f3b1c7e-not-in-logs';

describe('redis.url and its credentials', () => {
  it('accepts redis:// and rediss:// URLs with user, password and database number', () => {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://cache.example.com', `redis://app:${PASSWORD}@10.0.0.5:6380/2`, `redis://:${PASSWORD}@localhost`]) {
      assert.deepEqual(configProblems({ redis: { url } }), [], url);
    }
  });

  it('refuses other URLs naming the key, without ever echoing a password', () => {
    for (const url of ['http://127.0.0.1:6379', `redis://user:${PASSWORD}@host/db?x=1`, 'redis://', `redis://u:${PASSWORD}@host/x`]) {
      const problems = configProblems({ redis: { url } });
      assert.equal(problems.length, 1, url);
      assert.match(problems[0] as string, /^redis\.url: expected a redis:\/\/ or rediss:\/\/ URL/);
      assert.ok(!(problems[0] as string).includes(PASSWORD), problems[0]);
    }
  });

  it('refuses cluster rate limits and the shared tier without redis.url', () => {
    assert.deepEqual(configProblems({ rateLimit: { scope: 'cluster' }, cache: { shared: true } }), [
      'rateLimit.scope: "cluster" needs redis.url (the limit is kept in Redis)',
      'cache.shared: true needs redis.url (the shared tier is in Redis)',
    ]);
  });

  it('masks user and password in a URL made fit for a log line', () => {
    assert.equal(redactUrl(`redis://app:${PASSWORD}@10.0.0.5:6380/2`), 'redis://***:***@10.0.0.5:6380/2');
    assert.equal(redactUrl(`rediss://:${PASSWORD}@cache`), 'rediss://:***@cache');
    assert.equal(redactUrl('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6379');
    assert.equal(redactUrl(`not a url ${PASSWORD}@host`), '***@host');
  });
});

describe('the connection to Redis', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let fx: Fixture;
  const log = captureLog();

  before(async () => {
    redis = await startRedis(['--requirepass', PASSWORD]);
    // Redis goes away before the gateway starts: the gateway must start and serve without it.
    await redis.kill();
    // A Redis deadline no busy machine runs past (STEADY_REDIS): Redis is down or healthy here, never slow.
    fx = await startFixture(
      { redis: { ...STEADY_REDIS.redis, url: `redis://:${PASSWORD}@127.0.0.1:${redis.port}` }, admin: { port: 0 } },
      { logger: log.logger },
    );
  });
  after(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('starts and serves with Redis down, stays ready, and says so in the log and /metrics', async () => {
    const reader = bearer(await fx.token());
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, reader)).status, 200);
    assert.equal((await get(`${fx.gw.adminUrl}/readyz`)).status, 200);
    assert.equal(await metric(fx.gw, 'hypergate_redis_up'), 0);
    await until(async () => log.lines.some((l) => l.includes('redis unavailable')), 'the outage to be logged');
    const before = log.lines.filter((l) => l.includes('redis unavailable')).length;
    for (let n = 0; n < 20; n++) assert.equal((await get(`${fx.gw.url}/api/customers/${n + 2}`, reader)).status, 200);
    assert.equal(log.lines.filter((l) => l.includes('redis unavailable')).length, before, 'logged once, not per request or retry');
  });

  it('connects once Redis is there, with the password of the URL, and uses it', async () => {
    await redis.restart();
    await until(async () => (await metric(fx.gw, 'hypergate_redis_up')) === 1, 'the connection');
    const reader = bearer(await fx.token());
    const tierReads = await metric(fx.gw, 'hypergate_redis_calls_total', { op: 'tier_read', outcome: 'ok' });
    assert.equal((await get(`${fx.gw.url}/api/customers/40`, reader)).status, 200);
    assert.ok((await metric(fx.gw, 'hypergate_redis_calls_total', { op: 'tier_read', outcome: 'ok' })) > tierReads);
  });

  it('never writes the password to a log line or /metrics', async () => {
    const metrics = (await get(`${fx.gw.adminUrl}/metrics`)).text;
    assert.ok(metrics.includes('hypergate_redis_up 1'));
    assert.ok(!metrics.includes(PASSWORD));
    assert.ok(log.lines.some((l) => l.includes('redis connected: redis://:***@127.0.0.1')));
    assert.deepEqual(
      log.lines.filter((l) => l.includes(PASSWORD)),
      [],
    );
  });
});
