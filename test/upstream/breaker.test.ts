import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { configWith, mergeConfig } from '../../src/config/load.ts';
import { CircuitBreaker, PASS, PROBE } from '../../src/lib/breaker.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';
import { gate, waitFor } from '../helpers/wait.ts';

describe('CircuitBreaker', () => {
  const make = (failures = 3, cooldownMs = 1000) => {
    const clock = new ManualClock(1_000_000);
    return { clock, breaker: new CircuitBreaker({ failures, cooldownMs }, clock) };
  };

  test('opens after `failures` consecutive failures and refuses for the cooldown', () => {
    const { clock, breaker } = make();
    for (let i = 0; i < 2; i++) {
      assert.equal(breaker.admit(), PASS);
      breaker.failed(false);
    }
    assert.equal(breaker.state, 'closed');
    breaker.failed(false);
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.admit(), 1000);
    clock.advance(400);
    assert.equal(breaker.admit(), 600);
  });

  test('a success in between resets the count', () => {
    const { breaker } = make();
    breaker.failed(false);
    breaker.failed(false);
    breaker.succeeded(false);
    breaker.failed(false);
    breaker.failed(false);
    assert.equal(breaker.state, 'closed');
  });

  test('after the cooldown exactly one probe passes; its success closes the breaker', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    clock.advance(1000);
    assert.equal(breaker.state, 'half_open');
    assert.equal(breaker.admit(), PROBE);
    assert.ok(breaker.admit() > 0, 'a second request waits for the probe');
    breaker.succeeded(true);
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.admit(), PASS);
  });

  test("a failed probe opens it for another cooldown", () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    clock.advance(1000);
    assert.equal(breaker.admit(), PROBE);
    clock.advance(100);
    breaker.failed(true);
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.admit(), 1000);
  });

  test('outcomes of requests admitted before it opened change nothing', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    breaker.succeeded(false);
    assert.equal(breaker.state, 'open', 'a late success does not close it');
    clock.advance(1000);
    assert.equal(breaker.admit(), PROBE);
    breaker.failed(false);
    assert.equal(breaker.state, 'half_open', 'a late failure does not reopen it while the probe runs');
  });

  test('a wall clock stepped back while open keeps it open for one cooldown at most, not for the size of the step', () => {
    const { clock, breaker } = make(1);
    breaker.failed(false);
    clock.advance(-3_600_000); // NTP steps the clock back an hour, or a VM resumes
    assert.equal(breaker.state, 'open');
    assert.ok(breaker.admit() <= 1000, 'Retry-After is no longer than the cooldown');
    clock.advance(1000);
    assert.equal(breaker.state, 'half_open', '/readyz does not stay 503 for the hour');
    assert.equal(breaker.admit(), PROBE);
  });

  test('failures: 0 never opens', () => {
    const { breaker } = make(0);
    for (let i = 0; i < 100; i++) breaker.failed(false);
    assert.equal(breaker.admit(), PASS);
  });
});

describe('the upstream circuit breaker in a gateway', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  let nextId = 1;
  const fresh = (): number => nextId++;
  const read = (id: number) => get(`${fx.gw.url}/api/customers/${id}`, auth);
  const scrape = async () => (await get(`${fx.gw.adminUrl}/metrics`)).text;

  /** Three failing upstream requests in a row open it. */
  async function open(): Promise<void> {
    fx.upstream.on('*', { kind: 'json', status: 500, body: { error: 'down' } });
    for (let i = 0; i < 3; i++) assert.equal((await read(fresh())).status, 502);
  }

  before(async () => {
    fx = await startFixture({ upstream: { breaker: { failures: 3, cooldownMs: 5000 } }, admin: { port: 0 } });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(async () => {
    // Close the breaker left by the previous test: one probe after the cooldown, answered.
    fx.upstream.reset();
    fx.clock.advance(5000);
    await read(fresh());
    fx.upstream.reset();
  });
  after(() => fx.close());

  test('when open, misses fail fast with a 503 problem and Retry-After, and the upstream is not asked', async () => {
    await open();
    assert.equal(fx.upstream.hits(), 3);
    const res = await read(fresh());
    assertProblem(res, { status: 503, code: 'HG_ERR_UPSTREAM_UNAVAILABLE', headers: { 'retry-after': '5' } });
    fx.clock.advance(2100);
    assert.equal((await read(fresh())).headers['retry-after'], '3', 'the rest of the cooldown, rounded up');
    for (let i = 0; i < 10; i++) assert.equal((await read(fresh())).status, 503);
    assert.equal(fx.upstream.hits(), 3, 'nothing reached the upstream while open');
    assert.equal(sample(await scrape(), 'hypergate_upstream_requests_total', { outcome: 'rejected' }), 12);
  });

  test('after the cooldown one probe goes through while concurrent misses still fail fast; its success closes it', async () => {
    await open();
    fx.clock.advance(5000);
    const held = gate();
    fx.upstream.reset();
    fx.upstream.on('*', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 0, name: 'x', status: 'y' } } });
    const probeId = fresh();
    fx.upstream.on(`/customers/${probeId}`, { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: probeId, name: 'Probe', status: 'active' } } });
    const probe = read(probeId);
    await waitFor(() => fx.upstream.hits() === 1, 'the probe to reach the upstream');
    const others = await Promise.all(Array.from({ length: 10 }, () => read(fresh())));
    assert.ok(others.every((r) => r.status === 503 && r.headers['retry-after'] === '1'), 'misses during the probe fail fast');
    assert.equal(fx.upstream.hits(), 1, 'exactly one probe reached the upstream');
    held.open();
    assert.equal((await probe).status, 200);
    fx.upstream.reset();
    assert.equal((await read(fresh())).status, 200, 'closed again: requests reach the upstream');
    assert.equal(fx.upstream.hits(), 1);
  });

  test('a failed probe opens it for another cooldown', async () => {
    await open();
    fx.clock.advance(5000);
    fx.upstream.reset();
    fx.upstream.on('*', { kind: 'json', status: 503, body: {} });
    assert.equal((await read(fresh())).status, 502, 'the probe met the failure');
    const res = await read(fresh());
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(fx.upstream.hits(), 1);
  });

  test('a 404 from the upstream is a success for the breaker', async () => {
    fx.upstream.on('*', { kind: 'json', status: 500, body: {} });
    await read(fresh());
    await read(fresh());
    fx.upstream.on('*', { kind: 'json', status: 404, body: {} });
    assert.equal((await read(fresh())).status, 404);
    fx.upstream.on('*', { kind: 'json', status: 500, body: {} });
    await read(fresh());
    await read(fresh());
    assert.equal((await read(fresh())).status, 502, 'still closed: the count started again after the 404');
    assert.equal(fx.upstream.hits(), 6);
  });

  test('/readyz is 503 while it is open and ready again once the cooldown is over', async () => {
    assert.equal((await get(`${fx.gw.adminUrl}/readyz`)).status, 200);
    await open();
    const res = await get(`${fx.gw.adminUrl}/readyz`);
    assert.equal(res.status, 503);
    assert.match(problemOf(res).detail, /upstream: the circuit breaker is open/);
    fx.clock.advance(5000);
    assert.equal((await get(`${fx.gw.adminUrl}/readyz`)).status, 200, 'half-open: traffic may come to probe');
  });

  test('/metrics reports its state: 0 closed, 2 open, 1 half-open', async () => {
    assert.equal(sample(await scrape(), 'hypergate_upstream_breaker_state'), 0);
    await open();
    assert.equal(sample(await scrape(), 'hypergate_upstream_breaker_state'), 2);
    fx.clock.advance(5000);
    assert.equal(sample(await scrape(), 'hypergate_upstream_breaker_state'), 1);
  });

  test('a reload that keeps upstream.* keeps the open breaker; one that changes it starts closed', async () => {
    await open();
    await fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, { log: { level: 'warn' } })));
    assert.equal((await read(fresh())).status, 503, 'still open after the reload');
    await fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, { upstream: { timeoutMs: 1999 } })));
    fx.upstream.reset();
    assert.equal((await read(fresh())).status, 200, 'a new upstream client, a closed breaker');
  });
});
