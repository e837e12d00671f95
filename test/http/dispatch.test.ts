import { HgResponse } from '../../src/protocol/response.ts';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HgError } from '../../src/lib/errors.ts';
import { handleClientError } from '../../src/http/client-error.ts';
import { createDispatcher } from '../../src/http/dispatch.ts';
import { createRouter } from '../../src/http/router.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { get, parseRaw, rawRequest } from '../helpers/gateway.ts';

describe('dispatcher', () => {
  let server: Server;
  let url: string;
  let port: number;
  const logged: string[] = [];
  before(async () => {
    const router = createRouter([
      {
        method: 'GET',
        path: '/boom',
        handler: () => {
          throw new Error('secret detail at /etc/hypergate/key.pem');
        },
      },
      {
        method: 'GET',
        path: '/async-boom',
        handler: async () => {
          throw new TypeError('internal state 0xdeadbeef');
        },
      },
      {
        method: 'GET',
        path: '/teapot',
        handler: () => {
          throw new HgError('HG_ERR_UPSTREAM_TIMEOUT', { cause: new Error('hidden cause') });
        },
      },
      {
        method: 'GET',
        path: '/ok',
        handler: (_req, res) => {
          res.end('ok');
        },
      },
    ]);
    server = createServer(
      { ServerResponse: HgResponse },
      createDispatcher(
        router,
        createLogger('error', (line) => logged.push(line)),
        { maxUrlBytes: 200, maxHeaderCount: 100 },
      ),
    );
    server.on('clientError', handleClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}`;
  });
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  for (const path of ['/boom', '/async-boom']) {
    test(`a thrown exception (${path}) is a generic 500 problem, logged, and the server keeps serving`, async () => {
      const res = await get(`${url}${path}`);
      assert.equal(res.status, 500);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.deepEqual(res.json(), {
        type: 'urn:hypergate:problem:internal-error',
        title: 'Internal Server Error',
        status: 500,
        detail: 'An unexpected error occurred.',
        code: 'HG_ERR_INTERNAL',
      });
      assert.doesNotMatch(res.text, /secret|deadbeef|at /);
      assert.ok(
        logged.some((l) => /secret detail|0xdeadbeef/.test(l)),
        'the cause is logged for the operator',
      );
      assert.equal((await get(`${url}/ok`)).text, 'ok');
    });
  }

  test('a typed 5xx keeps its cause out of the answer but in the log', async () => {
    const res = await get(`${url}/teapot`);
    assert.equal(res.status, 504);
    assert.doesNotMatch(res.text, /hidden cause/);
    assert.ok(logged.some((l) => l.includes('hidden cause')));
  });

  test('HEAD of an error has the problem headers and no body', async () => {
    const res = await get(`${url}/nowhere`, {}, 'HEAD');
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.text, '');
  });

  test('a URL longer than the limit is a 414 problem', async () => {
    const res = await get(`${url}/${'a'.repeat(300)}`);
    assert.equal(res.status, 414);
    assert.equal(res.headers['content-type'], 'application/problem+json');
  });

  test('a request Node cannot parse gets a 400 problem and the connection is closed', async () => {
    const { status, head, body } = parseRaw(await rawRequest(port, 'GET /ok HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
    assert.equal(status, 400);
    assert.match(head, /Content-Type: application\/problem\+json/);
    assert.match(head, /Connection: close/);
    assert.equal((JSON.parse(body) as { code: string }).code, 'HG_ERR_BAD_REQUEST');
  });

  test('a request head over the size limit gets a 431 problem', async () => {
    const { status, body } = parseRaw(await rawRequest(port, `GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(status, 431);
    assert.equal((JSON.parse(body) as { code: string }).code, 'HG_ERR_HEADERS_TOO_LARGE');
  });
});
