import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HgResponse } from '../../src/protocol/response.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { rawRequest } from '../helpers/gateway.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';
import { EXPECTED_HEADS } from './cors-heads.expected.ts';

const APP = 'https://app.example.com';

/**
 * The head of one answer as raw bytes, with the fields that differ per run (Date, the request
 * id) replaced by a placeholder and the body left off.
 */
async function headOf(port: number, lines: readonly string[], body = ''): Promise<string> {
  const text = await rawRequest(port, [...lines, 'Connection: close', '', body].join('\r\n'));
  const end = text.indexOf('\r\n\r\n');
  return (end === -1 ? text : text.slice(0, end)).replace(/^(Date|X-Request-Id): .*$/gim, (line) => `${line.slice(0, line.indexOf(':'))}: *`);
}

/**
 * The CORS headers go with every kind of answer, each in its place among the answer's other
 * fields: the expected heads are what the gateway wrote when CORS set them one by one on the
 * response (node:http's setHeader), and must stay so byte for byte.
 */
describe('CORS headers in the raw head of every kind of answer', () => {
  let fx: Fixture;
  let files: StreamUpstream;
  let token: string;
  let writer: string;
  const seen: Record<string, string> = {};
  before(async () => {
    files = await startStreamUpstream();
    fx = await startFixture({
      cors: { origins: [APP] },
      upstreams: { files: { url: files.url } },
      routes: { open: { path: '/api/open/{path*}', methods: ['GET'], service: 'files', upstream: '/headers', public: true } },
    });
    token = await fx.token();
    writer = await fx.token({ claims: { scope: 'customers:read customers:write' } });
  });
  after(async () => {
    await fx.close();
    await files.close();
  });

  const port = (): number => Number(new URL(fx.gw.url).port);
  const ask = (name: string, method: string, path: string, ...fields: string[]): Promise<void> =>
    headOf(port(), [`${method} ${path} HTTP/1.1`, 'Host: gw', ...fields], method === 'PATCH' ? '{}' : '').then((head) => {
      seen[name] = head;
    });
  const auth = (): string => `Authorization: Bearer ${token}`;
  const fromApp = `Origin: ${APP}`;

  test('reads: a miss, a hit, a 304 and a HEAD, from the allowed origin, another and none', async () => {
    await ask('miss', 'GET', '/api/customers/42', auth(), fromApp);
    await ask('hit', 'GET', '/api/customers/42', auth(), fromApp);
    const etag = /^ETag: (.*)$/m.exec(seen['hit'] ?? '')?.[1] ?? '';
    await ask('notModified', 'GET', '/api/customers/42', auth(), fromApp, `If-None-Match: ${etag}`);
    await ask('head', 'HEAD', '/api/customers/42', auth(), fromApp);
    await ask('otherOrigin', 'GET', '/api/customers/42', auth(), 'Origin: https://evil.example');
    await ask('noOrigin', 'GET', '/api/customers/42', auth());
    await ask('collection', 'GET', '/api/customers', auth(), fromApp);
    for (const name of ['miss', 'hit', 'notModified', 'head', 'otherOrigin', 'noOrigin', 'collection']) assert.equal(seen[name], EXPECTED_HEADS[name], name);
  });

  test('problems, preflights and OPTIONS', async () => {
    await ask('unauthorized', 'GET', '/api/customers/42', fromApp);
    await ask('notFound', 'GET', '/nowhere', auth(), fromApp);
    await ask('methodNotAllowed', 'POST', '/api/customers/42', auth(), fromApp, 'Content-Length: 0');
    await ask('preflight', 'OPTIONS', '/api/customers/42', fromApp, 'Access-Control-Request-Method: GET');
    await ask('preflightUnknownPath', 'OPTIONS', '/nowhere', fromApp, 'Access-Control-Request-Method: GET');
    await ask('preflightOtherOrigin', 'OPTIONS', '/api/customers/42', 'Origin: https://evil.example', 'Access-Control-Request-Method: GET');
    await ask('options', 'OPTIONS', '/api/customers/42', fromApp);
    for (const name of ['unauthorized', 'notFound', 'methodNotAllowed', 'preflight', 'preflightUnknownPath', 'preflightOtherOrigin', 'options'])
      assert.equal(seen[name], EXPECTED_HEADS[name], name);
  });

  test('a write', async () => {
    await ask(
      'write',
      'PATCH',
      '/api/customers/42',
      `Authorization: Bearer ${writer}`,
      fromApp,
      'If-Match: *',
      'Content-Type: application/merge-patch+json',
      'Content-Length: 2',
    );
    assert.equal(seen['write'], EXPECTED_HEADS['write']);
  });

  test('a pass-through route, whose upstream answers with its own Vary', async () => {
    await ask('relayed', 'GET', '/api/open/x', fromApp);
    assert.equal(seen['relayed'], EXPECTED_HEADS['relayed']);
  });

  after(() => {
    if (process.env['HG_PRINT_HEADS'] === '1') console.log(JSON.stringify(seen, null, 1));
  });
});

describe('deferred CORS fields on the response object', () => {
  const GRANT = ['Vary', 'Origin', 'Access-Control-Allow-Origin', APP];
  const answer = (): HgResponse => new HgResponse(new IncomingMessage(new Socket()));
  const headText = (res: HgResponse): string => (res as unknown as { _header: string })._header.replace(/^Date: .*$/m, 'Date: *');

  test('a flat list is written the fast way: no field was set one by one', () => {
    const res = answer();
    res.deferHeaders(GRANT);
    res.writeHead(200, ['Content-Length', 2, 'vary', 'Accept, Origin']);
    assert.deepEqual(res.getHeaderNames(), []);
    assert.equal(
      headText(res),
      'HTTP/1.1 200 OK\r\nvary: Accept, Origin\r\nAccess-Control-Allow-Origin: ' + APP + '\r\nContent-Length: 2\r\nDate: *\r\nConnection: close\r\n\r\n',
    );
  });

  test('a field set one by one, an object or no list at all gets the deferred fields first, as setHeader put them', () => {
    const one = answer();
    one.deferHeaders(GRANT);
    one.setHeader('X-One', '1');
    one.writeHead(204);
    const object = answer();
    object.deferHeaders(GRANT);
    object.writeHead(204, { 'X-One': '1' });
    const list = answer();
    list.deferHeaders(GRANT);
    list.writeHead(204, ['X-One', '1']);
    for (const res of [one, object, list])
      assert.equal(
        headText(res),
        'HTTP/1.1 204 No Content\r\nVary: Origin\r\nAccess-Control-Allow-Origin: ' + APP + '\r\nX-One: 1\r\nDate: *\r\nConnection: close\r\n\r\n',
      );
  });

  test('a deferred field is read like one set with setHeader', () => {
    const res = answer();
    res.deferHeaders(GRANT);
    assert.equal(res.getHeader('vary'), 'Origin');
  });
});
