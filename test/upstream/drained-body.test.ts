import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';

const html = { 'content-type': 'text/html' };

/**
 * A body the gateway drops unread (a 404's, a 5xx's, a write's that is not JSON) does not change
 * what the answer's head already said: the upstream answered, whatever becomes of the rest.
 */
describe('an answer whose dropped body fails after its head', () => {
  let fx: Fixture;
  let reader: Record<string, string>;
  let writer: Record<string, string>;
  const outcomes = async (outcome: string): Promise<number> =>
    sample(await fx.gw.gateway.metrics.text(), 'hypergate_upstream_requests_total', { outcome }) ?? 0;

  before(async () => {
    // The breaker is off: each test reads the outcome each attempt was counted as.
    fx = await startFixture({ upstream: { timeoutMs: 300, breaker: { failures: 0 } } });
    reader = bearer(await fx.token({ expiresIn: 24 * 3600 }));
    writer = bearer(await fx.token({ expiresIn: 24 * 3600, claims: { scope: 'customers:read customers:write' } }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('a 404 whose body the upstream cuts off is still the 404, counted not_found (not a failure against the breaker)', async () => {
    const [notFound, unreachable] = [await outcomes('not_found'), await outcomes('unreachable')];
    fx.upstream.on('/customers/201', { kind: 'cut', status: 404, sent: '<html>', headers: html });
    assertProblem(await get(`${fx.gw.url}/api/customers/201`, reader), { status: 404, code: 'HG_ERR_CUSTOMER_NOT_FOUND' });
    assert.equal(await outcomes('not_found'), notFound + 1);
    assert.equal(await outcomes('unreachable'), unreachable);
  });

  test('a 404 whose body drips past the deadline is still the 404, not a time-out', async () => {
    const timeouts = await outcomes('timeout');
    fx.upstream.on('/customers/202', { kind: 'drip', status: 404, chunks: 1000, intervalMs: 20, headers: html });
    assertProblem(await get(`${fx.gw.url}/api/customers/202`, reader), { status: 404, code: 'HG_ERR_CUSTOMER_NOT_FOUND' });
    assert.equal(await outcomes('timeout'), timeouts);
  });

  test('a 500 whose body the upstream cuts off is a 502 counted bad_status, as any 500', async () => {
    const [badStatus, unreachable] = [await outcomes('bad_status'), await outcomes('unreachable')];
    fx.upstream.on('/customers/203', { kind: 'cut', status: 500, sent: '<html>', headers: html });
    const res = await get(`${fx.gw.url}/api/customers/203`, reader);
    assertProblem(res, { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    assert.match((res.json() as { detail: string }).detail, /status 500/);
    assert.equal(await outcomes('bad_status'), badStatus + 1);
    assert.equal(await outcomes('unreachable'), unreachable);
  });

  test('a DELETE the upstream answered 200 with a text body it then cuts off is done: 204, not a 502 for a change that was made', async () => {
    fx.upstream.on('DELETE /customers/204', { kind: 'cut', status: 200, sent: 'deleted', headers: { 'content-type': 'text/plain' } });
    const res = await send(`${fx.gw.url}/api/customers/204`, 'DELETE', { ...writer, 'if-match': '*' });
    assert.equal(res.status, 204, res.text);
    assert.equal(fx.upstream.requests.filter((r) => r.method === 'DELETE').length, 1, 'sent once');
  });

  test('a DELETE answered 200 with a text body dripping past the deadline is done: 204, not a time-out', async () => {
    fx.upstream.on('DELETE /customers/205', { kind: 'drip', status: 200, chunks: 1000, intervalMs: 20, headers: { 'content-type': 'text/plain' } });
    const res = await send(`${fx.gw.url}/api/customers/205`, 'DELETE', { ...writer, 'if-match': '*' });
    assert.equal(res.status, 204, res.text);
  });
});

describe('an answer whose dropped body arrives whole', () => {
  let fx: Fixture;
  let reader: Record<string, string>;
  let writer: Record<string, string>;
  before(async () => {
    // One connection: a body left unread would have to close it, and the next request would open another.
    fx = await startFixture({ upstream: { connections: 1, breaker: { failures: 0 } } });
    reader = bearer(await fx.token({ expiresIn: 24 * 3600 }));
    writer = bearer(await fx.token({ expiresIn: 24 * 3600, claims: { scope: 'customers:read customers:write' } }));
  });
  after(() => fx.close());

  test("a 404's, a 500's and a DELETE's text bodies are read to their end, and the one connection serves every request after them", async () => {
    fx.upstream.reset();
    fx.upstream.on('/customers/301', { kind: 'raw', status: 404, body: '<html>gone</html>', headers: html });
    fx.upstream.on('/customers/302', { kind: 'raw', status: 500, body: '<html>oops</html>', headers: html });
    fx.upstream.on('DELETE /customers/303', { kind: 'raw', status: 200, body: 'deleted', headers: { 'content-type': 'text/plain' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/301`, reader)).status, 404);
    assert.equal((await get(`${fx.gw.url}/api/customers/302`, reader)).status, 502);
    assert.equal((await send(`${fx.gw.url}/api/customers/303`, 'DELETE', { ...writer, 'if-match': '*' })).status, 204);
    assert.equal((await get(`${fx.gw.url}/api/customers/304`, reader)).status, 200);
    assert.equal(fx.upstream.hits(), 4);
    assert.equal(fx.upstream.connections(), 1, `ports: ${fx.upstream.remotePorts.join(', ')}`);
  });
});
