import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem, CHALLENGE, rawAnswer } from '../helpers/hostile.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';

function routes(filesUrl: string): unknown {
  return {
    upstreams: { files: { url: filesUrl, forwardAuthorization: true, forwardClaims: { 'X-Tenant': 'tenant' } } },
    rateLimit: { requestsPerSecond: 1, burst: 30 },
    routes: {
      private: { path: '/api/private/{name}', methods: ['GET', 'POST'], service: 'files', upstream: '/headers', scope: 'files:read' },
      open: { path: '/api/open/{path*}', methods: ['GET', 'DELETE'], service: 'files', upstream: '/headers', scope: 'files:admin', public: true },
    },
  };
}

describe('who may use a pass-through route', () => {
  let fx: Fixture;
  let files: StreamUpstream;
  let log: CapturedLog;
  let reader: string;
  let other: string;

  before(async () => {
    files = await startStreamUpstream();
    log = captureLog();
    fx = await startFixture(routes(files.url), { logger: log.logger });
    reader = await fx.token({ claims: { sub: 'reader-1', scope: 'files:read', tenant: 'acme' } });
    other = await fx.token({ claims: { sub: 'other-1', scope: 'customers:read', tenant: 'acme' } });
  });
  after(async () => {
    await fx.close();
    await files.close();
  });

  const seenHeaders = (): Record<string, string | undefined> => (files.seen.at(-1)?.headers ?? {}) as Record<string, string | undefined>;

  test('without a token: 401 with the Bearer challenge, and nothing reaches the upstream', async () => {
    const before = files.seen.length;
    const res = await get(`${fx.gw.url}/api/private/a`);
    assertProblem(res, { status: 401, code: 'HG_ERR_AUTH_MISSING', headers: { 'www-authenticate': CHALLENGE.bare } });
    const forged = await get(`${fx.gw.url}/api/private/a`, bearer(`${reader}x`));
    assertProblem(forged, { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN', headers: { 'www-authenticate': CHALLENGE.invalidToken } });
    assert.equal(files.seen.length, before);
  });

  test("a token without the route's scope: 403 naming it", async () => {
    const res = await get(`${fx.gw.url}/api/private/a`, bearer(other));
    assertProblem(res, {
      status: 403,
      code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE',
      headers: { 'www-authenticate': 'Bearer realm="hypergate", error="insufficient_scope", scope="files:read"' },
    });
  });

  test('a token with the scope passes, with Authorization and the claims the service forwards', async () => {
    const res = await get(`${fx.gw.url}/api/private/a`, bearer(reader));
    assert.equal(res.status, 200);
    assert.equal(seenHeaders()['authorization'], `Bearer ${reader}`);
    assert.equal(seenHeaders()['x-tenant'], 'acme');
  });

  test('a public route serves GET without credentials, verifies a token that comes along, and serves one without its scope as anonymous', async () => {
    const anonymous = await get(`${fx.gw.url}/api/open/a/b`);
    assert.equal(anonymous.status, 200);
    assert.equal(seenHeaders()['authorization'], undefined);
    const forged = await get(`${fx.gw.url}/api/open/a/b`, bearer(`${reader}x`));
    assertProblem(forged, { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN' });
    const unscoped = await get(`${fx.gw.url}/api/open/a/b`, bearer(other));
    assert.equal(unscoped.status, 200);
    assert.equal(seenHeaders()['authorization'], undefined, 'a token the route does not accept is not passed on');
    assert.equal(seenHeaders()['x-tenant'], undefined);
  });

  test("a public route's other methods still need the token and its scope", async () => {
    const res = await send(`${fx.gw.url}/api/open/a`, 'DELETE', {});
    assertProblem(res, { status: 401, code: 'HG_ERR_AUTH_MISSING' });
  });

  test('a method the route does not take: 405 with Allow; OPTIONS answers the same list', async () => {
    const res = await send(`${fx.gw.url}/api/private/a`, 'PUT', bearer(reader), 'x');
    assertProblem(res, { status: 405, code: 'HG_ERR_METHOD_NOT_ALLOWED', headers: { allow: 'GET, HEAD, POST' } });
    const options = await get(`${fx.gw.url}/api/private/a`, {}, 'OPTIONS');
    assert.equal(options.status, 204);
    assert.equal(options.headers['allow'], 'GET, HEAD, POST');
  });

  test('a path whose segments could name another upstream path is a 404 before authentication: dot-segments, encoded slashes, empty segments', async () => {
    const before = files.seen.length;
    for (const path of [
      '/api/open/..',
      '/api/open/a/../b',
      '/api/open/%2e%2E',
      '/api/open/a%2Fb',
      '/api/open/a%5Cb',
      '/api/open/a//b',
      '/api/open/a%zz',
      '/api/private/a%2Fb',
      '/api/open/',
    ]) {
      const res = await rawAnswer(fx.gw.port, `GET ${path} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 404, path);
    }
    assert.equal(files.seen.length, before);
  });

  test('request smuggling is refused at the edge: Content-Length with Transfer-Encoding, two lengths, a body on GET', async () => {
    const before = files.seen.length;
    const both = await rawAnswer(
      fx.gw.port,
      `POST /api/private/a HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${reader}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/private/b HTTP/1.1\r\nHost: gw\r\n\r\n`,
    );
    assert.equal(both.status, 400);
    const twice = await rawAnswer(
      fx.gw.port,
      `POST /api/private/a HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${reader}\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd`,
    );
    assert.equal(twice.status, 400);
    const getWithBody = await rawAnswer(
      fx.gw.port,
      `GET /api/private/a HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${reader}\r\nContent-Length: 4\r\nConnection: close\r\n\r\nabcd`,
    );
    assert.equal(getWithBody.status, 413);
    assert.equal(files.seen.length, before, 'none of them reached the upstream');
  });

  test("a chunked upload reaches the upstream with framing of the gateway's own", async () => {
    const res = await rawAnswer(
      fx.gw.port,
      `POST /api/private/a HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${reader}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\nabcd\r\n0\r\n\r\n`,
    );
    assert.equal(res.status, 200);
    assert.equal(seenHeaders()['transfer-encoding'], 'chunked');
    assert.equal(seenHeaders()['content-length'], undefined);
  });

  test('rate limits, the access log and the request metrics cover pass-through routes under their pattern', async () => {
    const res = await get(`${fx.gw.url}/api/private/metrics-check`, { ...bearer(reader), 'x-request-id': 'route-log-1' });
    assert.equal(res.status, 200);
    log.logger.flush?.();
    const line = log.records().find((r) => r['reqId'] === 'route-log-1');
    assert.equal(line?.['status'], 200);
    assert.equal(line?.['path'], '/api/private/metrics-check');
    assert.equal(line?.['sub'], 'reader-1');
    assert.equal(typeof line?.['upstreamMs'], 'number');
    const text = await fx.gw.gateway.metrics.text();
    assert.ok((sample(text, 'hypergate_http_requests_total', { route: '/api/private/:name', method: 'GET', status: '200' }) ?? 0) >= 1);
    let limited = 0;
    for (let i = 0; i < 40 && limited === 0; i++) if ((await get(`${fx.gw.url}/api/open/x`)).status === 429) limited++;
    assert.equal(limited, 1, 'anonymous requests of a public route are charged to the client address');
  });
});
