import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

/**
 * A service of three real upstreams. Every read is of a new id (a miss), so each one reaches a
 * target. The fixture's clock is moved by hand: ejections end when the test says so.
 */
describe('a service with several targets', () => {
  let fx: Fixture;
  let ups: TestUpstream[];
  let auth: Record<string, string>;
  let nextId = 1;
  const read = () => get(`${fx.gw.url}/api/customers/${nextId++}`, auth);
  const hits = () => ups.map((u) => u.hits());
  const metric = async (name: string, labels: Record<string, string>) => sample(await fx.gw.gateway.metrics.text(), name, labels) ?? 0;
  const origin = (u: TestUpstream) => new URL(u.url).origin;

  before(async () => {
    ups = [await startTestUpstream(), await startTestUpstream(), await startTestUpstream()];
    fx = await startFixture({
      upstream: {
        url: null,
        timeoutMs: 1000,
        // The breaker is off: these tests are about the targets, not the service as a whole.
        breaker: { failures: 0 },
        targets: [
          { url: ups[0]!.url, weight: 1 },
          { url: ups[1]!.url, weight: 1 },
          { url: ups[2]!.url, weight: 2 },
        ],
        outlier: { consecutiveFailures: 2, baseEjectionMs: 10_000, maxEjectionMs: 60_000 },
        slowStartMs: 20_000,
      },
    });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(async () => {
    for (const u of ups) u.reset();
    // Past every ejection and slow start of the test before, and a success on each target to
    // clear the failures it counted.
    fx.clock.advance(10 * 60_000);
    for (let i = 0; i < 8; i++) await read();
    for (const u of ups) u.reset();
  });
  after(async () => {
    await fx.close();
    await Promise.all(ups.map((u) => u.close()));
  });

  test('requests are shared by weight', async () => {
    for (let i = 0; i < 40; i++) assert.equal((await read()).status, 200);
    const [a, b, c] = hits() as [number, number, number];
    assert.equal(a + b + c, 40);
    assert.ok(Math.abs(a - 10) <= 2 && Math.abs(b - 10) <= 2 && Math.abs(c - 20) <= 3, `shares ${a}, ${b}, ${c}`);
    assert.equal(fx.upstream.hits(), 0, "the fixture's own upstream is not a target");
  });

  test('a target that resets its connections is retried on another, then ejected', async () => {
    ups[0]!.on('*', { kind: 'reset' });
    for (let i = 0; i < 20; i++) assert.equal((await read()).status, 200, `request ${i}`);
    assert.equal(ups[0]!.hits(), 2, 'two failures in a row eject it');
    assert.equal(ups[1]!.hits() + ups[2]!.hits(), 20);
    assert.ok((await metric('hypergate_upstream_target_ejections_total', { service: 'upstream', target: origin(ups[0]!) })) >= 1);
    assert.equal(await metric('hypergate_upstream_target_healthy', { service: 'upstream', target: origin(ups[0]!) }), 0);
    assert.equal(await metric('hypergate_upstream_target_healthy', { service: 'upstream', target: origin(ups[1]!) }), 1);
  });

  test('a target answering 503 is ejected, and the 503s it gave are the only failures', async () => {
    ups[1]!.on('*', { kind: 'json', status: 503, body: {} });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await read()).status);
    assert.equal(statuses.filter((s) => s !== 200).length, 2, statuses.join(' '));
    assert.equal(ups[1]!.hits(), 2);
    assert.ok((await metric('hypergate_upstream_target_requests_total', { service: 'upstream', target: origin(ups[1]!), outcome: 'bad_status' })) >= 2);
  });

  test('a slow target (over the deadline) is ejected after its time-outs', async () => {
    ups[2]!.on('*', { kind: 'delay', ms: 2500, then: { kind: 'json', body: { id: 1, name: 'late', status: 'active' } } });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await read()).status);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [504, 504],
    );
    assert.equal(ups[2]!.hits(), 2);
  });

  test('an ejected target comes back after its cooldown, with a share that grows over slowStartMs', async () => {
    ups[0]!.on('*', { kind: 'reset' });
    for (let i = 0; i < 12; i++) await read();
    assert.equal(ups[0]!.hits(), 2);
    ups[0]!.reset();
    // Back, at a tenth of its weight first: about 1 in 31 requests.
    fx.clock.advance(10_000);
    for (let i = 0; i < 31; i++) assert.equal((await read()).status, 200);
    assert.ok(ups[0]!.hits() <= 2, `early share ${ups[0]!.hits()}`);
    ups[0]!.reset();
    fx.clock.advance(20_000);
    for (let i = 0; i < 40; i++) await read();
    assert.ok(Math.abs(ups[0]!.hits() - 10) <= 2, `full share ${ups[0]!.hits()}`);
  });

  test('a killed target is skipped: every request still succeeds', async () => {
    const killed = ups[0]!;
    const targets = fx.gw.gateway.config.upstream.targets;
    const before = await metric('hypergate_upstream_target_requests_total', { service: 'upstream', target: origin(killed), outcome: 'unreachable' });
    await killed.close();
    try {
      for (let i = 0; i < 20; i++) assert.equal((await read()).status, 200, `request ${i}`);
      assert.equal(
        await metric('hypergate_upstream_target_requests_total', { service: 'upstream', target: origin(killed), outcome: 'unreachable' }),
        before + 2,
      );
    } finally {
      // The other tests need three targets: a new one on the same port.
      ups[0] = await startTestUpstream(Number(new URL(targets[0]!.url).port));
    }
  });
});
