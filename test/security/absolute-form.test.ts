import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { get } from '../helpers/gateway.ts';
import { assertProblem, assertStillServes, rawAnswer, type RawAnswer } from '../helpers/hostile.ts';
import { captureLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * RFC 9112 section 3.2.2: a server MUST accept a request target in absolute-form
 * (`GET http://host/path HTTP/1.1`), and the target URI is then that URI, not Host. The gateway
 * serves it as the origin-form of its path and query; the authority selects nothing. Raw sockets,
 * so the request line is exactly the one written.
 */
describe('a request target in absolute-form', () => {
  let fx: Fixture;
  let token: string;
  let writer: string;
  const log = captureLog();

  before(async () => {
    fx = await startFixture({ admin: { port: 0 } }, { logger: log.logger });
    token = await fx.token({ expiresIn: 24 * 3600 });
    writer = await fx.token({ expiresIn: 24 * 3600, claims: { scope: 'customers:read customers:write' } });
  });
  after(() => fx.close());

  const origin = (): string => `127.0.0.1:${fx.gw.port}`;
  /** One request on its own connection: `target` as written, a valid Host, a bearer token. */
  const ask = (target: string, extra = '', method = 'GET', bearer = token, body = ''): Promise<RawAnswer> =>
    rawAnswer(
      fx.gw.port,
      `${method} ${target} HTTP/1.1\r\nHost: ${origin()}\r\nAuthorization: Bearer ${bearer}\r\n${extra}${body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`}Connection: close\r\n\r\n${body}`,
    );

  /** The parts of an answer that must not depend on the form of the target. */
  const served = (a: RawAnswer): Record<string, unknown> => ({
    status: a.status,
    contentType: a.headers['content-type'],
    cacheControl: a.headers['cache-control'],
    etag: a.headers['etag'],
    body: a.text,
  });

  test('GET http://<gateway>/api/customers/1 answers the status, Content-Type, Cache-Control, ETag and body bytes of GET /api/customers/1, from the same cache entry', async () => {
    const byPath = await ask('/api/customers/1');
    const absolute = await ask(`http://${origin()}/api/customers/1`);
    assert.equal(byPath.status, 200);
    assert.deepEqual(served(absolute), served(byPath));
    assert.equal((JSON.parse(absolute.text) as { links: { self: string } }).links.self, '/api/customers/1');
    assert.equal(fx.upstream.hits('/customers/1'), 1, "the second request was a hit on the first one's cache key");
  });

  test('the query of an absolute-form target is honoured: a page of customers as the origin-form asks for it, with the same canonical links.self', async () => {
    const byPath = await ask('/api/customers?limit=2&offset=4');
    const absolute = await ask(`http://${origin()}/api/customers?limit=2&offset=4`);
    assert.equal(byPath.status, 200);
    assert.deepEqual(served(absolute), served(byPath));
    assert.equal((JSON.parse(absolute.text) as { links: { self: string } }).links.self, '/api/customers?offset=4&limit=2');
  });

  test('the scheme is matched without regard to case (RFC 3986 section 3.1), and https is taken as well as http', async () => {
    const byPath = await ask('/api/customers/2');
    for (const scheme of ['HTTP', 'Http', 'https', 'HTTPS'])
      assert.deepEqual(served(await ask(`${scheme}://${origin()}/api/customers/2`)), served(byPath), scheme);
  });

  test('an absolute-form target naming another host is served as its path is here: the authority selects nothing', async () => {
    const byPath = await ask('/api/customers/3');
    for (const authority of ['evil.example', 'evil.example:8443', '10.0.0.1', '[::1]:80', '[fe80::1%25eth0]:8080', 'xn--bcher-kva.example', 'host:']) {
      assert.deepEqual(served(await ask(`http://${authority}/api/customers/3`)), served(byPath), authority);
    }
  });

  // [what is wrong, target]
  const invalid: Array<[string, string]> = [
    ['another scheme', 'ftp://x/api/customers/1'],
    ['a scheme that is no URI scheme of HTTP', 'httpx://x/api/customers/1'],
    ['one slash after the scheme (refused by the parser)', 'http:/x/api/customers/1'],
    ['user info', 'http://u@x/api/customers/1'],
    ['user info with a password', 'http://u:p@x/api/customers/1'],
    ['a fragment', 'http://x/api/customers/1#f'],
    ['a fragment after a query', 'http://x?offset=0#f'],
    ['an empty host', 'http:///api/customers/1'],
    ['an empty host with a port', 'http://:80/api/customers/1'],
    ['a port that is not digits', 'http://x:abc/api/customers/1'],
    ['two ports', 'http://x:80:90/api/customers/1'],
    ['an unclosed IP literal', 'http://[::1/api/customers/1'],
    ['an empty IP literal', 'http://[]/api/customers/1'],
    ['a stray bracket', 'http://x]/api/customers/1'],
    ['a bad percent escape in the host', 'http://x%zz/api/customers/1'],
  ];
  for (const [what, target] of invalid) {
    test(`an absolute-form target with ${what} (${target}) is a 400 bad-request problem, and the gateway still serves`, async () => {
      assertProblem(await ask(target), { status: 400, code: 'HG_ERR_BAD_REQUEST' });
      await assertStillServes(fx.gw.url, token);
    });
  }

  test('the asterisk-form is left to the router as before: GET * and OPTIONS * are 404 not-found', async () => {
    for (const method of ['GET', 'OPTIONS']) assertProblem(await ask('*', '', method), { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
  });

  test('Host is still required and checked with an absolute-form target (RFC 9112 section 3.2)', async () => {
    const target = `http://${origin()}/api/customers/1`;
    assertProblem(await rawAnswer(fx.gw.port, `GET ${target} HTTP/1.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`), {
      status: 400,
      code: 'HG_ERR_BAD_REQUEST',
    });
    assertProblem(await rawAnswer(fx.gw.port, `GET ${target} HTTP/1.1\r\nHost: a b c\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`), {
      status: 400,
      code: 'HG_ERR_BAD_REQUEST',
    });
  });

  test('a PATCH with an absolute-form target is the same write as with the origin-form: same answer, same request upstream', async () => {
    const patch = 'Content-Type: application/merge-patch+json\r\nIf-Match: *\r\n';
    fx.upstream.on('PATCH /customers/70', { kind: 'json', body: { id: 70, name: 'Renamed', status: 'active' } });
    const byPath = await ask('/api/customers/70', patch, 'PATCH', writer, '{"name":"Renamed"}');
    const absolute = await ask(`http://evil.example/api/customers/70`, patch, 'PATCH', writer, '{"name":"Renamed"}');
    assert.equal(byPath.status, 200, byPath.text);
    assert.deepEqual(served(absolute), served(byPath));
    assert.equal((JSON.parse(absolute.text) as { links: { self: string } }).links.self, '/api/customers/70');
    const sent = fx.upstream.requests.filter((r) => r.method === 'PATCH' && r.path === '/customers/70');
    assert.deepEqual(
      sent.map((r) => r.body),
      ['{"name":"Renamed"}', '{"name":"Renamed"}'],
    );
  });

  test('the access log shows the origin-form path and query of an absolute-form request, and "/" for an empty path', async () => {
    await ask(`http://evil.example/api/customers?offset=2&limit=3`, 'X-Request-Id: absolute-page\r\n');
    await ask(`http://${origin()}`, 'X-Request-Id: absolute-empty\r\n');
    const line = (id: string): Record<string, unknown> | undefined => log.records().find((r) => r['msg'] === 'request' && r['reqId'] === id);
    await waitFor(() => line('absolute-page') !== undefined && line('absolute-empty') !== undefined, 'the access lines');
    assert.equal(line('absolute-page')?.['path'], '/api/customers');
    assert.equal(line('absolute-page')?.['query'], 'offset=2&limit=3');
    assert.equal(line('absolute-page')?.['status'], 200);
    assert.equal(line('absolute-empty')?.['path'], '/');
  });

  test('the request metrics count an absolute-form request under its route pattern, not as unmatched', async () => {
    const count = async (): Promise<number | undefined> =>
      sample((await get(`${fx.gw.adminUrl}/metrics`)).text, 'hypergate_http_requests_total', { route: '/api/customers/:id', method: 'GET', status: '200' });
    const before = (await count()) ?? 0;
    assert.equal((await ask('http://evil.example/api/customers/5')).status, 200);
    assert.equal(await count(), before + 1);
  });
});

/** The admin listener takes the same forms: an operator's tool behind a forward proxy sends them. */
describe('a request target in absolute-form on the admin listener', () => {
  let fx: Fixture;
  let admin: string;

  before(async () => {
    fx = await startFixture({ admin: { port: 0 } });
    admin = await fx.token({ claims: { sub: 'ops', scope: 'hypergate:admin' } });
  });
  after(() => fx.close());

  const adminPort = (): number => Number(new URL(fx.gw.adminUrl ?? '').port);
  const ask = (method: string, target: string, bearer = ''): Promise<RawAnswer> =>
    rawAnswer(
      adminPort(),
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${adminPort()}\r\n${bearer === '' ? '' : `Authorization: Bearer ${bearer}\r\n`}Connection: close\r\n\r\n`,
    );

  test('GET http://<admin>/healthz answers 200 {"status":"ok"} as GET /healthz does', async () => {
    const answer = await ask('GET', `http://127.0.0.1:${adminPort()}/healthz`);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { status: 'ok' });
  });

  test('DELETE http://<admin>/cache/api/customers/7 purges that customer as DELETE /cache/api/customers/7 does', async () => {
    const reader = await fx.token();
    assert.equal((await get(`${fx.gw.url}/api/customers/7`, { authorization: `Bearer ${reader}` })).status, 200);
    const answer = await ask('DELETE', `http://127.0.0.1:${adminPort()}/cache/api/customers/7`, admin);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { purged: 1 });
    assert.equal((await get(`${fx.gw.url}/api/customers/7`, { authorization: `Bearer ${reader}` })).status, 200);
    assert.equal(fx.upstream.hits('/customers/7'), 2, 'the purge dropped the entry, so the read went upstream again');
  });

  test('a target that is neither a path nor an http URI is a 400 problem, and the listener still answers', async () => {
    assertProblem(await ask('GET', 'ftp://127.0.0.1/healthz'), { status: 400, code: 'HG_ERR_BAD_REQUEST' });
    assert.equal((await ask('GET', '/healthz')).status, 200);
  });
});
