import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';
import { gate, waitFor } from '../helpers/wait.ts';
import { configWith } from '../../src/gateway/load-config.ts';

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
    // critical: its open breaker takes the instance out of rotation (/readyz 503).
    fx = await startFixture({ upstream: { critical: true, breaker: { failures: 3, cooldownMs: 5000 } }, admin: { port: 0 } });
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
    fx.upstream.on(`/customers/${probeId}`, {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', body: { id: probeId, name: 'Probe', status: 'active' } },
    });
    const probe = read(probeId);
    await waitFor(() => fx.upstream.hits() === 1, 'the probe to reach the upstream');
    const others = await Promise.all(Array.from({ length: 10 }, () => read(fresh())));
    assert.ok(
      others.every((r) => r.status === 503 && r.headers['retry-after'] === '1'),
      'misses during the probe fail fast',
    );
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
