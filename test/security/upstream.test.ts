import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, startGateway } from '../helpers/gateway.ts';
import { assertProblem, assertStillServes, type ExpectedProblem } from '../helpers/hostile.ts';
import type { UpstreamBehaviour } from '../helpers/upstream.ts';

const MB = 1024 * 1024;

/**
 * Hostile input catalogue, part 5: an upstream that misbehaves in every way a real one does.
 * What a client sees is the mapping on main: 502 for anything wrong with the answer, 504 when it
 * does not come in time (upstream.timeoutMs, here 300 ms); never the upstream's own bytes.
 */
describe('hostile input: upstream faults', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    // The breaker is off so each fault is seen on its own (test/upstream/breaker.test.ts covers it).
    fx = await startFixture({ upstream: { timeoutMs: 300, breaker: { failures: 0 } } });
    token = await fx.token({ expiresIn: 24 * 3600 });
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  const badGateway: ExpectedProblem = { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' };
  const timeout: ExpectedProblem = { status: 504, code: 'HG_ERR_UPSTREAM_TIMEOUT' };
  const json = { 'content-type': 'application/json' };

  // [name, customer id, what the upstream does, what the client gets]
  const cases: Array<[string, number, UpstreamBehaviour, ExpectedProblem]> = [
    ['a hang (no answer at all)', 101, { kind: 'hang' }, timeout],
    ['a slow body, drip-fed past the deadline', 102, { kind: 'drip', chunks: 100, intervalMs: 20 }, timeout],
    ['a reset before any byte', 103, { kind: 'reset' }, badGateway],
    ['a reset in the middle of the body', 104, { kind: 'cut', sent: '{"id":104,"name":"Half' }, badGateway],
    ['a 500', 105, { kind: 'json', status: 500, body: { error: 'boom', stack: 'at Upstream.handler (/srv/app.js:1:1)' } }, badGateway],
    ['a 503 with Retry-After', 106, { kind: 'json', status: 503, body: { error: 'down' }, headers: { 'retry-after': '120' } }, badGateway],
    ['a 429 of its own', 107, { kind: 'json', status: 429, body: { error: 'slow down' } }, badGateway],
    ['invalid JSON', 108, { kind: 'raw', status: 200, body: '{"id": 108, "name": ', headers: json }, badGateway],
    ['an empty body', 109, { kind: 'raw', status: 200, body: '', headers: json }, badGateway],
    ['JSON null', 110, { kind: 'json', body: null }, badGateway],
    ['a JSON array', 111, { kind: 'json', body: [{ id: 111, name: 'x', status: 'y' }] }, badGateway],
    ['a 50 MB chunked body', 112, { kind: 'chunked', bytes: 50 * MB }, badGateway],
    ['a 50 MB Content-Length announced', 113, { kind: 'raw', status: 200, body: '{}', headers: { ...json, 'content-length': String(50 * MB) } }, badGateway],
    ['an HTML content type', 114, { kind: 'raw', status: 200, body: '<html>{"id":114}</html>', headers: { 'content-type': 'text/html' } }, badGateway],
    ['no content type', 115, { kind: 'raw', status: 200, body: '{"id":115,"name":"x","status":"y"}' }, badGateway],
    ["another customer's record (id mismatch)", 116, { kind: 'json', body: { id: 117, name: 'Someone else', status: 'active' } }, badGateway],
    ['a record without id', 118, { kind: 'json', body: { name: 'x', status: 'y' } }, badGateway],
    ['a name that is not a string', 119, { kind: 'json', body: { id: 119, name: { first: 'x' }, status: 'y' } }, badGateway],
    ['a 301 redirect (never followed)', 120, { kind: 'raw', status: 301, body: '', headers: { location: '/customers/42' } }, badGateway],
    [
      'a 307 redirect to another host (never followed)',
      121,
      { kind: 'raw', status: 307, body: '', headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
      badGateway,
    ],
    [
      "a response head over undici's header limit",
      122,
      { kind: 'json', body: { id: 122, name: 'x', status: 'y' }, headers: { 'x-big': 'h'.repeat(64 * 1024) } },
      badGateway,
    ],
  ];
  for (const [name, id, behaviour, expected] of cases) {
    test(`upstream ${name}: ${expected.status} ${expected.code}`, async () => {
      fx.upstream.on(`/customers/${id}`, behaviour);
      const res = await get(`${fx.gw.url}/api/customers/${id}`, bearer(token));
      assertProblem(res, expected);
      assert.doesNotMatch(res.text, /boom|Upstream\.handler|Someone else|Half|169\.254/, 'nothing of the upstream answer leaks');
      await assertStillServes(fx.gw.url, token);
    });
  }

  test('a redirect is not followed: the upstream saw only the one request', async () => {
    fx.upstream.on('/customers/123', { kind: 'raw', status: 301, body: '', headers: { location: '/customers/42' } });
    assertProblem(await get(`${fx.gw.url}/api/customers/123`, bearer(token)), badGateway);
    assert.deepEqual(fx.upstream.paths, ['/customers/123']);
  });

  test('a failed answer is not cached: the next request asks the upstream again', async () => {
    fx.upstream.on('/customers/124', { kind: 'json', status: 500, body: {} });
    assertProblem(await get(`${fx.gw.url}/api/customers/124`, bearer(token)), badGateway);
    fx.upstream.reset();
    assert.equal((await get(`${fx.gw.url}/api/customers/124`, bearer(token))).status, 200);
  });

  test("an upstream 404 is the customer's 404 (control: not a fault)", async () => {
    fx.upstream.on('/customers/125', { kind: 'json', status: 404, body: { error: 'not found' } });
    assertProblem(await get(`${fx.gw.url}/api/customers/125`, bearer(token)), { status: 404, code: 'HG_ERR_CUSTOMER_NOT_FOUND' });
  });
});

describe('hostile input: an upstream that refuses connections', () => {
  test('a refused connection is 502, and the gateway keeps answering', async () => {
    // A port that was just free and is closed again: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as { port: number };
        s.close(() => resolve(p));
      });
    });
    const fx = await startFixture();
    const gw = await startGateway(
      { upstream: { url: `http://127.0.0.1:${port}`, breaker: { failures: 0 } }, auth: { jwksUrl: fx.jwks.url } },
      { clock: fx.clock },
    );
    try {
      const token = await fx.token();
      for (let i = 0; i < 3; i++)
        assertProblem(await get(`${gw.url}/api/customers/${i + 1}`, bearer(token)), { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
      // The same token on a gateway whose upstream is up.
      await assertStillServes(fx.gw.url, token);
    } finally {
      await gw.close();
      await fx.close();
    }
  });
});
