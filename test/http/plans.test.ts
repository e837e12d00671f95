import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, send, type HttpAnswer } from '../helpers/gateway.ts';
import { startIntrospectionServer, type IntrospectionServer } from '../helpers/introspection-server.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { mergeConfig } from '../../src/config/load.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { sample } from '../helpers/metrics.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';

const DAILY = 4;

describe('plans and limits per route on one instance (no Redis)', () => {
  let fx: Fixture;
  let log: CapturedLog;

  before(async () => {
    log = captureLog();
    fx = await startFixture(
      {
        auth: { planClaim: 'plan' },
        rateLimit: { defaultPlan: 'free' },
        plans: { free: { requestsPerSecond: 1000, burst: 1000, quotas: [{ requests: DAILY, per: 'day' }] } },
        resources: { customers: { rateLimit: { requestsPerSecond: 1, burst: 2 } } },
      },
      { logger: log.logger },
    );
  });
  after(async () => {
    await fx?.close();
  });

  const as = async (sub: string, plan?: string): Promise<Record<string, string>> =>
    bearer(await fx.token({ claims: plan === undefined ? { sub } : { sub, plan } }));
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> => sample(await fx.gw.gateway.metrics.text(), name, labels) ?? 0;

  it("applies a resource's own limit alongside the plan, each with its policy in the answer", async () => {
    const headers = await as('route-1', 'free');
    const first = await get(`${fx.gw.url}/api/customers/1`, headers);
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-policy'], `"free";q=1000;w=1, "free-day";q=${DAILY};w=86400, "route";q=2;w=2`);
    assert.match(String(first.headers['ratelimit']), /^"free";r=999;t=1, "free-day";r=3;t=\d+, "route";r=1;t=1$/);
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, headers)).status, 200);
    const refused = await get(`${fx.gw.url}/api/customers/1`, headers);
    assert.equal(refused.status, 429);
    assert.equal(problemOf(refused).code, 'HG_ERR_RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['ratelimit-policy'], '"route";q=2;w=2');
    // The API root has no limit of its own: only the plan holds it.
    assert.equal((await get(`${fx.gw.url}/api`, headers)).status, 200);
    assert.equal(await metric('hypergate_route_limit_refused_total', { route: 'resource:customers' }), 1);
  });

  it('holds a daily quota per instance, refused until 00:00 UTC, and counts again the next day', async () => {
    const headers = await as('quota-1', 'free');
    for (let n = 0; n < DAILY; n++) assert.equal((await get(`${fx.gw.url}/api`, headers)).status, 200);
    const refused = await get(`${fx.gw.url}/api`, headers);
    assert.equal(refused.status, 429);
    const now = fx.clock.now();
    const midnight = Math.ceil((Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000 - now) / 1000);
    assert.equal(refused.headers['retry-after'], String(midnight));
    assert.match(String(refused.headers['ratelimit']), new RegExp(`"free-day";r=0;t=${midnight}$`));
    assert.equal(await metric('hypergate_plan_requests_total', { plan: 'free', result: 'refused', policy: 'day' }), 1);
    fx.clock.advance(midnight * 1000);
    assert.equal((await get(`${fx.gw.url}/api`, await as('quota-1', 'free'))).status, 200);
  });

  it('takes the default plan for a plan name not declared, logged once per name and counted', async () => {
    const headers = await as('unknown-1', 'platinum');
    for (let n = 0; n < 2; n++) {
      const res = await get(`${fx.gw.url}/api`, headers);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['ratelimit-policy']), /^"free";q=1000;w=1, "free-day"/);
    }
    assert.equal(await metric('hypergate_plan_undeclared_total'), 2);
    assert.equal(log.records().filter((r) => r['event'] === 'plan_undeclared' && r['plan'] === 'platinum').length, 1);
  });

  it("keeps a plan's counts across a reload that leaves plans and rateLimit as they were, and starts again when the plan changes", async () => {
    const headers = await as('reload-1', 'free');
    assert.equal((await get(`${fx.gw.url}/api`, headers)).status, 200);
    await fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, { log: { level: 'warn' } })));
    assert.match(String((await get(`${fx.gw.url}/api`, headers)).headers['ratelimit']), /"free-day";r=2;/);
    await fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, { plans: { free: { burst: 999 } } })));
    assert.match(String((await get(`${fx.gw.url}/api`, headers)).headers['ratelimit']), /^"free";r=998;t=1, "free-day";r=3;/);
    await fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, { plans: { free: { burst: 1000 } } })));
  });

  it('takes the default plan for credentials that name none', async () => {
    const res = await get(`${fx.gw.url}/api`, await as('none-1'));
    assert.equal(res.status, 200);
    assert.match(String(res.headers['ratelimit']), /^"free";r=999;t=1, "free-day";r=3;t=\d+$/);
  });
});

describe('a gateway without plans', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ rateLimit: { requestsPerSecond: 10, burst: 20 } });
  });
  after(async () => {
    await fx?.close();
  });

  it('sends no RateLimit field on a passing answer, as before plans', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token()));
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit'], undefined);
    assert.equal(res.headers['ratelimit-policy'], undefined);
  });
});

describe('the plan of anonymous callers (rateLimit.anonymousPlan)', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({
      resources: { customers: { public: true } },
      server: { trustProxy: ['127.0.0.1'] },
      plans: { anonymous: { requestsPerSecond: 1, burst: 2 }, member: { requestsPerSecond: 100, burst: 100 } },
      rateLimit: { anonymousPlan: 'anonymous', defaultPlan: 'member' },
    });
  });
  after(async () => {
    await fx?.close();
  });

  it('holds a public read without credentials to the anonymous plan, per client address', async () => {
    const from = (address: string): Record<string, string> => ({ 'x-forwarded-for': address });
    const statuses: number[] = [];
    for (let n = 0; n < 3; n++) statuses.push((await get(`${fx.gw.url}/api/customers/1`, from('10.9.0.1'))).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const other = await get(`${fx.gw.url}/api/customers/1`, from('10.9.0.2'));
    assert.equal(other.status, 200);
    assert.equal(other.headers['ratelimit'], '"anonymous";r=1;t=1');
    // A caller with a token is held to its own plan, whatever its address.
    const member = await get(`${fx.gw.url}/api/customers/1`, { ...from('10.9.0.1'), ...bearer(await fx.token({ claims: { sub: 'member-1' } })) });
    assert.equal(member.status, 200);
    assert.equal(member.headers['ratelimit-policy'], '"member";q=100;w=1');
  });
});

describe("a resource's write limit (resources.<name>.writeRateLimit)", () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ resources: { customers: { writeRateLimit: { requestsPerSecond: 1, burst: 1 } } } });
  });
  after(async () => {
    await fx?.close();
  });

  it('holds writes to their own limit per subject, and leaves reads alone', async () => {
    const writer = bearer(await fx.token({ claims: { sub: 'writer-1', scope: 'customers:read customers:write' } }));
    const post = (): Promise<HttpAnswer> =>
      send(`${fx.gw.url}/api/customers`, 'POST', { ...writer, 'content-type': 'application/json' }, '{"name":"Ann","status":"active"}');
    const first = await post();
    assert.notEqual(first.status, 429);
    assert.equal(first.headers['ratelimit-policy'], '"route";q=1;w=1');
    const second = await post();
    assert.equal(second.status, 429);
    assert.equal(second.headers['retry-after'], '1');
    for (let n = 0; n < 3; n++) assert.equal((await get(`${fx.gw.url}/api/customers/1`, writer)).status, 200);
    // Another subject has a bucket of its own.
    const other = bearer(await fx.token({ claims: { sub: 'writer-2', scope: 'customers:read customers:write' } }));
    assert.notEqual(
      (await send(`${fx.gw.url}/api/customers`, 'POST', { ...other, 'content-type': 'application/json' }, '{"name":"Bo","status":"active"}')).status,
      429,
    );
  });
});

describe("a pass-through route's limit (routes.<name>.rateLimit)", () => {
  let fx: Fixture;
  let files: StreamUpstream;
  const limited = { path: '/api/files/{name}', service: 'files', upstream: '/headers', rateLimit: { requestsPerSecond: 1, burst: 1 } };
  before(async () => {
    files = await startStreamUpstream();
    const plans = { plans: { basic: { requestsPerSecond: 100, burst: 100 } }, rateLimit: { defaultPlan: 'basic' } };
    fx = await startFixture({ ...plans, upstreams: { files: { url: files.url } }, routes: { files: limited } });
  });
  after(async () => {
    await fx?.close();
    await files?.close();
  });

  it('holds the route to its limit beside the plan, with both policies on a passing answer', async () => {
    const headers = bearer(await fx.token({ claims: { sub: 'files-1' } }));
    const first = await get(`${fx.gw.url}/api/files/a`, headers);
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-policy'], '"basic";q=100;w=1, "route";q=1;w=1');
    assert.equal(first.headers['ratelimit'], '"basic";r=99;t=1, "route";r=0;t=1');
    const seen = files.seen.length;
    const second = await get(`${fx.gw.url}/api/files/a`, headers);
    assert.equal(second.status, 429);
    assert.equal(files.seen.length, seen, 'nothing reached the upstream');
    assert.equal(second.headers['ratelimit-policy'], '"route";q=1;w=1');
  });
});

describe('the plan an introspected token names (auth.introspection.planField)', () => {
  let fx: Fixture;
  let idp: IntrospectionServer;
  before(async () => {
    process.env['HG_TEST_PLANS_INTROSPECTION_ID'] = 'gateway';
    process.env['HG_TEST_PLANS_INTROSPECTION_SECRET'] = 'secret';
    idp = await startIntrospectionServer();
    const introspection = {
      url: idp.url,
      clientId: { env: 'HG_TEST_PLANS_INTROSPECTION_ID' },
      clientSecret: { env: 'HG_TEST_PLANS_INTROSPECTION_SECRET' },
      planField: 'plan',
    };
    fx = await startFixture({
      auth: { introspection },
      plans: { gold: { requestsPerSecond: 100, burst: 100 }, basic: { requestsPerSecond: 1, burst: 1 } },
      rateLimit: { defaultPlan: 'basic' },
    });
  });
  after(async () => {
    await fx?.close();
    await idp?.close();
  });

  it('holds an opaque token to the plan its introspection answer names, as a JWT is held to its claim', async () => {
    const token = `opaque-plans-${'x'.repeat(24)}`;
    idp.answer(token, { active: true, sub: 'carol', scope: 'customers:read', plan: 'gold', exp: fx.clock.seconds + 600 });
    for (let n = 0; n < 3; n++) {
      const res = await get(`${fx.gw.url}/api/customers/1`, bearer(token));
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-policy'], '"gold";q=100;w=1');
    }
  });
});
