import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { freePort } from '../helpers/main-process.ts';
import { sample } from '../helpers/metrics.ts';

const record = (id: number) => ({ kind: 'json', body: { id, name: `Customer ${id}`, status: 'active' } }) as const;

/** A gateway and its upstream with the breaker off and this upstream deadline, and a reader's headers. */
async function retryFixture(timeoutMs: number): Promise<{ fx: Fixture; auth: Record<string, string> }> {
  const fx = await startFixture({ upstream: { timeoutMs, breaker: { failures: 0 } } });
  return { fx, auth: bearer(await fx.token({ expiresIn: 24 * 3600 })) };
}

describe('upstream retries', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  const read = (id: number) => get(`${fx.gw.url}/api/customers/${id}`, auth);
  const count = async (name: string, labels: Record<string, string> = {}) => sample(await fx.gw.gateway.metrics.text(), name, labels) ?? 0;

  // The breaker is off here so that every test meets exactly the fault it sets up. A deadline no
  // busy machine runs past: these faults are not time-outs.
  before(async () => ({ fx, auth } = await retryFixture(10_000)));
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('a GET whose connection is reset before any answer byte is sent once more, on another connection', async () => {
    const retries = await count('hypergate_upstream_retries_total');
    fx.upstream.on('/customers/1', { kind: 'sequence', steps: [{ kind: 'reset' }, record(1)] });
    const res = await read(1);
    assert.equal(res.status, 200);
    assert.equal((res.json() as { name: string }).name, 'Customer 1');
    assert.equal(fx.upstream.hits('/customers/1'), 2);
    const [first, second] = fx.upstream.remotePorts;
    assert.notEqual(first, second, 'the retry did not use the reset connection');
    assert.equal(await count('hypergate_upstream_retries_total'), retries + 1);
  });

  test('it is retried exactly once', async () => {
    fx.upstream.on('/customers/2', { kind: 'reset' });
    assert.equal((await read(2)).status, 502);
    assert.equal(fx.upstream.hits('/customers/2'), 2);
  });

  test('a 500 is not retried', async () => {
    fx.upstream.on('/customers/3', { kind: 'json', status: 500, body: {} });
    assert.equal((await read(3)).status, 502);
    assert.equal(fx.upstream.hits('/customers/3'), 1);
  });

  test('a connection lost after the answer began is not retried', async () => {
    fx.upstream.on('/customers/5', { kind: 'cut' });
    assert.equal((await read(5)).status, 502);
    assert.equal(fx.upstream.hits('/customers/5'), 1);
  });
});

describe('upstream retries and the deadline', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  const read = (id: number) => get(`${fx.gw.url}/api/customers/${id}`, auth);
  before(async () => ({ fx, auth } = await retryFixture(1500)));
  after(() => fx.close());

  test('a time-out is not retried', async () => {
    fx.upstream.on('/customers/4', { kind: 'hang' });
    assert.equal((await read(4)).status, 504);
    assert.equal(fx.upstream.hits('/customers/4'), 1);
  });

  test('the retry runs within the one deadline of the request', async () => {
    // Each attempt alone fits in upstream.timeoutMs (1.5 s); both together do not.
    fx.upstream.on('/customers/6', {
      kind: 'sequence',
      steps: [
        { kind: 'delay', ms: 900, then: { kind: 'reset' } },
        { kind: 'delay', ms: 900, then: record(6) },
      ],
    });
    const res = await read(6);
    assert.equal(res.status, 504);
    assert.equal(problemOf(res).code, 'HG_ERR_UPSTREAM_TIMEOUT');
    assert.equal(fx.upstream.hits('/customers/6'), 2);
  });
});

describe('upstream retries and the breaker', () => {
  test('a refused connection is tried twice, and each attempt counts against the breaker', async () => {
    // A port that was free a moment ago: nothing listens there, so connecting is refused.
    const port = await freePort();
    const fx = await startFixture({ upstream: { url: `http://127.0.0.1:${port}`, breaker: { failures: 2 } } });
    try {
      const auth = bearer(await fx.token());
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, auth)).status, 502);
      const text = await fx.gw.gateway.metrics.text();
      assert.equal(sample(text, 'hypergate_upstream_requests_total', { outcome: 'unreachable' }), 2, 'two attempts');
      assert.equal(sample(text, 'hypergate_upstream_retries_total'), 1);
      const next = await get(`${fx.gw.url}/api/customers/2`, auth);
      assert.equal(next.status, 503, 'the two attempts of one request opened a breaker set to 2 failures');
      assert.equal(problemOf(next).code, 'HG_ERR_UPSTREAM_UNAVAILABLE');
    } finally {
      await fx.close();
    }
  });
});
