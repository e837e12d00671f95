import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, startGateway } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer } from '../helpers/keys.ts';
import { freePort } from '../helpers/main-process.ts';

describe('upstream failures map to problems', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    // The breaker is off: this suite meets one failure after another and checks each mapping.
    fx = await startFixture({ upstream: { timeoutMs: 300, maxResponseBytes: 4096, breaker: { failures: 0 } } });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  async function expectProblem(status: number, slug: string, id: number): Promise<string> {
    const res = await get(`${fx.gw.url}/api/customers/${id}`, auth);
    assert.equal(res.status, status);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    const problem = problemOf(res);
    assert.equal(problem.type, `urn:hypergate:problem:${slug}`);
    assert.doesNotMatch(res.text, /127\.0\.0\.1|ECONN|at .*\.ts/, 'no internal detail reaches the client');
    return problem.detail;
  }

  const cases: Array<[string, number, Parameters<Fixture['upstream']['on']>[1], number, string]> = [
    ['a 500', 1, { kind: 'json', status: 500, body: { error: 'x' } }, 502, 'bad-gateway'],
    ['a 503', 2, { kind: 'json', status: 503, body: { error: 'x' } }, 502, 'bad-gateway'],
    ['a reset connection', 3, { kind: 'reset' }, 502, 'bad-gateway'],
    [
      'a body that is not JSON',
      4,
      { kind: 'raw', status: 200, body: '{"id": 4, "name":', headers: { 'content-type': 'application/json' } },
      502,
      'bad-gateway',
    ],
    ['a wrong content type', 5, { kind: 'raw', status: 200, body: '<html></html>', headers: { 'content-type': 'text/html' } }, 502, 'bad-gateway'],
    ['a record without name', 6, { kind: 'json', body: { id: 6, status: 'active' } }, 502, 'bad-gateway'],
    ['a record without status', 7, { kind: 'json', body: { id: 7, name: 'x' } }, 502, 'bad-gateway'],
    ['a record whose id does not match', 8, { kind: 'json', body: { id: 9, name: 'x', status: 'y' } }, 502, 'bad-gateway'],
    ['a JSON array', 10, { kind: 'json', body: [1, 2] }, 502, 'bad-gateway'],
    ['a redirect (never followed)', 11, { kind: 'raw', status: 301, body: '', headers: { location: '/customers/1' } }, 502, 'bad-gateway'],
    ['a body over upstream.maxResponseBytes', 12, { kind: 'json', body: { id: 12, name: 'x'.repeat(5000), status: 'y' } }, 502, 'bad-gateway'],
    ['a chunked body growing past upstream.maxResponseBytes', 16, { kind: 'chunked', bytes: 1024 * 1024 }, 502, 'bad-gateway'],
    ['no answer within upstream.timeoutMs', 13, { kind: 'hang' }, 504, 'gateway-timeout'],
    ['a body drip-fed past the deadline', 14, { kind: 'drip', chunks: 50, intervalMs: 20 }, 504, 'gateway-timeout'],
  ];
  for (const [what, id, behaviour, status, slug] of cases) {
    test(`${what} is ${status}`, async () => {
      fx.upstream.on(`/customers/${id}`, behaviour);
      await expectProblem(status, slug, id);
    });
  }

  test('a redirect is not followed', async () => {
    fx.upstream.on('/customers/11', { kind: 'raw', status: 302, body: '', headers: { location: '/customers/1' } });
    await expectProblem(502, 'bad-gateway', 11);
    assert.deepEqual(fx.upstream.paths, ['/customers/11']);
  });

  test('a numeric string id that matches is accepted and rendered as a number', async () => {
    fx.upstream.on('/customers/15', { kind: 'json', body: { id: '15', name: 'x', status: 'y' } });
    const res = await get(`${fx.gw.url}/api/customers/15`, auth);
    assert.equal((res.json() as { id: unknown }).id, 15);
  });

  test('the gateway keeps serving after every failure', async () => {
    assert.equal((await get(`${fx.gw.url}/api/customers/20`, auth)).status, 200);
  });
});

describe('upstream connectivity', () => {
  test('a refused connection is 502', async () => {
    // A port that was free a moment ago: nothing listens there, so connecting is refused.
    const port = await freePort();
    const key = await makeKey();
    const jwks = await startJwksServer([key.publicJwk]);
    const gw = await startGateway({ upstream: { url: `http://127.0.0.1:${port}` }, auth: { jwksUrl: jwks.url } });
    try {
      const res = await get(`${gw.url}/api/customers/1`, bearer(await signToken(key)));
      assert.equal(res.status, 502);
      assert.doesNotMatch(res.text, /ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      await gw.close();
      await jwks.close();
    }
  });

  test('an upstream URL with a path prefix is honoured and the path is built from the canonical id', async () => {
    const seen: string[] = [];
    const upstream = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 77, name: 'Prefixed', status: 'active' }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    const key = await makeKey();
    const jwks = await startJwksServer([key.publicJwk]);
    const gw = await startGateway({ upstream: { url: `http://127.0.0.1:${port}/v2/` }, auth: { jwksUrl: jwks.url } });
    try {
      const res = await get(`${gw.url}/api/customers/77?x=../../admin`, bearer(await signToken(key)));
      assert.equal(res.status, 200);
      assert.deepEqual(seen, ['/v2/customers/77']);
    } finally {
      await gw.close();
      await jwks.close();
      upstream.closeAllConnections();
      upstream.close();
    }
  });
});
