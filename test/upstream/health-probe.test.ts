import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Balancer, type BalancePolicy } from '../../src/upstream/balancer.ts';
import { HealthProbes, type ProbeSettings } from '../../src/upstream/health-probe.ts';
import { Target } from '../../src/upstream/target.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const POLICY: BalancePolicy = {
  balance: 'round-robin',
  outlier: { consecutiveFailures: 0, baseEjectionMs: 1, maxEjectionMs: 1, statuses: [] },
  slowStartMs: 0,
};
const SETTINGS: ProbeSettings = { path: '/health', intervalMs: 60_000, timeoutMs: 1000, expectStatus: 200, healthyThreshold: 1, unhealthyThreshold: 1 };
const HEALTHY = { kind: 'json', body: { status: 'ok' } } as const;

describe('the active health check of a service with several targets', () => {
  let fx: Fixture;
  let ups: TestUpstream[];
  let auth: Record<string, string>;
  let nextId = 1;
  let metrics = '';
  const read = () => get(`${fx.gw.url}/api/customers/${nextId++}`, auth);
  const origin = (u: TestUpstream) => new URL(u.url).origin;
  const scrape = async () => {
    metrics = await fx.gw.gateway.metrics.text();
  };
  const healthy = (u: TestUpstream) => sample(metrics, 'hypergate_upstream_target_healthy', { service: 'upstream', target: origin(u) });
  const probes = (u: TestUpstream, result: string) =>
    sample(metrics, 'hypergate_upstream_probes_total', { service: 'upstream', target: origin(u), result }) ?? 0;
  /** Polls /metrics until `ready` holds (the probes run on their own timers). */
  const until = async (ready: () => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      await scrape();
      if (ready()) return;
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    ups = [await startTestUpstream(), await startTestUpstream()];
    for (const u of ups) u.on('/health', HEALTHY);
    fx = await startFixture({
      upstream: {
        url: null,
        targets: ups.map((u) => ({ url: u.url })),
        healthCheck: { path: '/health', intervalMs: 100, timeoutMs: 1000, expectStatus: 200, healthyThreshold: 2, unhealthyThreshold: 2 },
      },
    });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  after(async () => {
    await fx.close();
    await Promise.all(ups.map((u) => u.close()));
  });

  test('each target is probed at the path, and counted', async () => {
    await until(() => ups.every((u) => probes(u, 'pass') >= 2), 'two passed probes of each target');
    for (const u of ups) assert.equal(u.hits('/health'), u.hits());
    assert.equal(healthy(ups[0]!), 1);
  });

  test('a target failing its probe is taken out of the balance, and comes back when it passes again', async () => {
    ups[1]!.on('/health', { kind: 'json', status: 503, body: {} });
    await until(() => healthy(ups[1]!) === 0, 'the target taken out');
    for (let i = 0; i < 10; i++) assert.equal((await read()).status, 200);
    // Only probes reached it.
    assert.equal(ups[1]!.paths.filter((p) => p.startsWith('/customers/')).length, 0);
    ups[1]!.on('/health', HEALTHY);
    await until(() => healthy(ups[1]!) === 1, 'the target back');
    for (let i = 0; i < 10; i++) assert.equal((await read()).status, 200);
    assert.ok(
      ups[1]!.paths.some((p) => p.startsWith('/customers/')),
      'requests reach it again',
    );
  });

  test('a target that does not answer its probe in time is taken out too', async () => {
    ups[0]!.on('/health', { kind: 'hang' });
    await until(() => probes(ups[0]!, 'fail') >= 2 && healthy(ups[0]!) === 0, 'the silent target taken out');
    ups[0]!.on('/health', HEALTHY);
    await until(() => healthy(ups[0]!) === 1, 'the target back');
  });
});

describe('health probes', () => {
  test('stop: the timers end and no probe is sent after it', async () => {
    const up = await startTestUpstream();
    try {
      const target = new Target(up.url, 1, { connect: { timeout: 1000 } }, {});
      const balancer = new Balancer([target, new Target('http://127.0.0.1:1', 1, { connect: { timeout: 1000 } }, {})], POLICY, new ManualClock(), () => {});
      const probes = new HealthProbes('svc', balancer, SETTINGS, '', undefined);
      await probes.probe(target);
      assert.equal(up.hits('/health'), 1);
      probes.stop();
      await probes.probe(target);
      assert.equal(up.hits('/health'), 1);
      await target.close();
    } finally {
      await up.close();
    }
  });
});
