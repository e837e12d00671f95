import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { rawAnswer } from '../helpers/hostile.ts';

const RECORD = '{"name":"N","status":"active"}';

/**
 * Sends `head` and the first half of `body` on a new connection at once, the rest `restAfterMs`
 * later, and resolves with everything the gateway wrote until it closed or `waitMs` passed.
 */
function slowBody(port: number, head: string, body: string, restAfterMs: number, waitMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const half = Math.floor(body.length / 2);
    const done = (): void => {
      clearTimeout(rest);
      clearTimeout(give);
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', done);
    socket.write(head + body.slice(0, half));
    const rest = setTimeout(() => {
      if (!socket.destroyed) socket.write(body.slice(half));
    }, restAfterMs);
    const give = setTimeout(() => socket.destroy(), waitMs);
  });
}

describe("a write's body as it arrives", () => {
  let fx: Fixture;
  let token: string;
  /** What reached the upstream besides GETs. */
  const writesSent = (): unknown[] => fx.upstream.requests.filter((r) => r.method !== 'GET');

  before(async () => {
    // requestTimeoutMs 1000 with headersTimeoutMs 1000: Node looks at its connections once a second.
    fx = await startFixture({ server: { headersTimeoutMs: 1000, requestTimeoutMs: 1000 } });
    token = await fx.token({ claims: { scope: 'customers:read customers:write' }, expiresIn: 3600 });
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 900, name: 'N', status: 'active' } });
  });
  beforeEach(() => {
    fx.upstream.reset();
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 900, name: 'N', status: 'active' } });
  });
  after(() => fx.close());

  const post = (extra: string): string =>
    `POST /api/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${extra}`;
  const chunked = (body: string): string => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

  // Regression: "Transfer-Encoding: gzip, chunked" was unframed as chunked and the gzip bytes
  // checked and sent on as if they were plain JSON.
  test('a transfer coding other than chunked is a 501 problem (RFC 9112 section 6.1), and nothing is sent', async () => {
    for (const coding of ['gzip, chunked', 'deflate, chunked', 'x-custom, chunked', 'identity, chunked']) {
      const res = await rawAnswer(fx.gw.port, `${post(`Transfer-Encoding: ${coding}\r\nConnection: close\r\n`)}\r\n${chunked(RECORD)}`);
      assert.equal(res.status, 501, `${coding}: ${res.text}`);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const problem = JSON.parse(res.text) as { code: string; detail: string };
      assert.equal(problem.code, 'HG_ERR_UNSUPPORTED_TRANSFER_CODING');
      assert.match(problem.detail, /chunked/);
    }
    assert.deepEqual(writesSent(), []);
  });

  test('after the 501 the body is dropped and the connection goes on: the next request on it is answered', async () => {
    const get = `GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;
    const res = await rawAnswer(fx.gw.port, `${post('Transfer-Encoding: gzip, chunked\r\n')}\r\n${chunked(RECORD)}${get}`);
    assert.equal(res.status, 501);
    assert.match(res.text, /HTTP\/1\.1 200 OK/);
    assert.deepEqual(writesSent(), []);
  });

  test('a coding list that does not end in chunked is a 400: its body has no length (RFC 9112 section 6.3)', async () => {
    const res = await rawAnswer(fx.gw.port, `${post('Transfer-Encoding: chunked, gzip\r\n')}\r\n${chunked(RECORD)}`);
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(writesSent(), []);
  });

  // Regression, found by the request-path fuzzer: an empty Transfer-Encoding was a 501, as if it
  // named a coding the gateway does not know.
  test('an empty Transfer-Encoding is a 400 problem, and nothing is sent', async () => {
    const res = await rawAnswer(fx.gw.port, `${post('Transfer-Encoding: \r\nConnection: close\r\n')}\r\n`);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.match((JSON.parse(res.text) as { detail: string }).detail, /Transfer-Encoding/);
    assert.deepEqual(writesSent(), []);
  });

  test('chunked alone, in any case, is taken', async () => {
    for (const coding of ['chunked', 'Chunked']) {
      const res = await rawAnswer(fx.gw.port, `${post(`Transfer-Encoding: ${coding}\r\nConnection: close\r\n`)}\r\n${chunked(RECORD)}`);
      assert.equal(res.status, 201, `${coding}: ${res.text}`);
    }
    assert.equal(writesSent().length, 2);
  });

  // Regression: Node looks for requests over server.requestTimeoutMs once a second, so a body that
  // completed between the deadline and that look was taken, and written upstream.
  test('a body that completes after server.requestTimeoutMs is answered 408 and never written upstream', async () => {
    const head = post(`Content-Length: ${RECORD.length}\r\nConnection: close\r\n\r\n`);
    // Three requests a third of a second apart, each completing 300 ms past its deadline: whenever
    // Node's once-a-second look comes, it can fall inside at most one of their late windows.
    const answers = await Promise.all(
      [0, 333, 666].map(async (offset) => {
        await sleep(offset);
        return slowBody(fx.gw.port, head, RECORD, 1300, 4000);
      }),
    );
    for (const text of answers) assert.match(text, /^HTTP\/1\.1 408 /, text);
    assert.deepEqual(writesSent(), []);
  });

  test('a slow body that completes within server.requestTimeoutMs is written', async () => {
    const head = post(`Content-Length: ${RECORD.length}\r\nConnection: close\r\n\r\n`);
    const text = await slowBody(fx.gw.port, head, RECORD, 300, 4000);
    assert.match(text, /^HTTP\/1\.1 201 /, text);
    assert.equal(writesSent().length, 1);
  });
});
