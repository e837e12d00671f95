import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { parseRaw, rawExchange } from '../helpers/gateway.ts';

/** Every answer in a raw byte stream: one status per "HTTP/1.1 <code>" at the start of a message. */
function statuses(text: string): number[] {
  return [...text.matchAll(/(?:^|\r\n)HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

function problemCode(text: string): string {
  const { head, body } = parseRaw(text);
  assert.match(head, /\r\nContent-Type: application\/problem\+json\r\n/i, head);
  return (JSON.parse(body) as { code: string }).code;
}

describe('bounded everything: each limit on a raw socket', () => {
  let fx: Fixture;
  let token: string;
  let port: number;
  before(async () => {
    fx = await startFixture({ server: { headersTimeoutMs: 500, requestTimeoutMs: 1000 } });
    token = await fx.token({ expiresIn: 24 * 3600 });
    port = fx.gw.port;
  });
  after(() => fx.close());

  const request = (extra = '', path = '/api/customers/1', method = 'GET'): string =>
    `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${extra}`;

  /** After every fault, an ordinary request on a new connection still gets its customer. */
  async function stillServes(): Promise<void> {
    const { text } = await rawExchange(port, `${request('Connection: close\r\n')}\r\n`);
    assert.equal(parseRaw(text).status, 200, text);
  }

  test('a 10 MB Authorization header is refused with 431 before any parsing, and the connection closed', async () => {
    const huge = `GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(10 * 1024 * 1024)}\r\n\r\n`;
    const { text, closed } = await rawExchange(port, huge, 5000);
    assert.equal(parseRaw(text).status, 431, text.slice(0, 200));
    assert.equal(problemCode(text), 'HG_ERR_HEADERS_TOO_LARGE');
    assert.ok(closed);
    await stillServes();
  });

  test('a request target over server.maxUrlBytes is 414', async () => {
    const { text } = await rawExchange(port, `${request('Connection: close\r\n', `/api/customers/1?${'q'.repeat(9000)}`)}\r\n`);
    assert.equal(parseRaw(text).status, 414);
    assert.equal(problemCode(text), 'HG_ERR_URI_TOO_LONG');
    await stillServes();
  });

  test('a request line that is not HTTP/1.x (HTTP/2.0 spelled out, or no version: HTTP/0.9) is 400 and closes', async () => {
    for (const line of [`GET /api/customers/1 HTTP/2.0\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`, 'GET /api/customers/1\r\n\r\n']) {
      const { text, closed } = await rawExchange(port, line);
      assert.equal(parseRaw(text).status, 400, text.slice(0, 200));
      assert.equal(problemCode(text), 'HG_ERR_BAD_REQUEST');
      assert.match(parseRaw(text).body, /HTTP\/1\.1 and HTTP\/1\.0/);
      assert.ok(closed, 'the connection is closed');
    }
    await stillServes();
  });

  test('more header fields than server.maxHeaderCount is 431, even when the head is small', async () => {
    // Host and Authorization are two of the 100; 99 more makes 101 fields in well under 2 KB.
    const many = Array.from({ length: 99 }, (_, i) => `X-F${i}: v\r\n`).join('');
    const { text } = await rawExchange(port, `${request(`${many}Connection: close\r\n`)}\r\n`);
    assert.equal(parseRaw(text).status, 431, text);
    assert.equal(problemCode(text), 'HG_ERR_HEADERS_TOO_LARGE');
    assert.match(parseRaw(text).body, /more than 100 header fields/);
  });

  test('exactly server.maxHeaderCount header fields are accepted', async () => {
    const many = Array.from({ length: 97 }, (_, i) => `X-F${i}: v\r\n`).join('');
    const { text } = await rawExchange(port, `${request(`${many}Connection: close\r\n`)}\r\n`);
    assert.equal(parseRaw(text).status, 200, text);
  });

  test('a GET with a Content-Length body is 413, the body is never taken for a next request, and the connection closes', async () => {
    const smuggled = 'GET /api/customers/2 HTTP/1.1\r\nHost: x\r\n\r\n';
    const { text, closed } = await rawExchange(port, `${request(`Content-Length: ${smuggled.length}\r\n`)}\r\n${smuggled}`);
    assert.deepEqual(statuses(text), [413], text);
    assert.equal(problemCode(text), 'HG_ERR_PAYLOAD_TOO_LARGE');
    assert.match(parseRaw(text).head, /\r\nConnection: close(\r\n|$)/i);
    assert.ok(closed, 'the server closes the connection');
    assert.equal(fx.upstream.hits('/customers/2'), 0);
    await stillServes();
  });

  test('a chunked body is 413 and the connection closes', async () => {
    const { text, closed } = await rawExchange(port, `${request('Transfer-Encoding: chunked\r\n')}\r\n5\r\nhello\r\n0\r\n\r\n`);
    assert.deepEqual(statuses(text), [413], text);
    assert.equal(problemCode(text), 'HG_ERR_PAYLOAD_TOO_LARGE');
    assert.ok(closed);
  });

  test('a 1 MB body is answered 413 without being read', async () => {
    const body = Buffer.alloc(1024 * 1024, 0x61);
    const { text, closed } = await rawExchange(port, [`${request(`Content-Length: ${body.length}\r\n`)}\r\n`, body]);
    assert.deepEqual(statuses(text), [413], text.slice(0, 300));
    assert.ok(closed);
    await stillServes();
  });

  test('a body announced with Expect: 100-continue gets 413 and never a 100 Continue', async () => {
    const { text, closed } = await rawExchange(port, `${request('Content-Length: 5\r\nExpect: 100-continue\r\n')}\r\n`);
    assert.deepEqual(statuses(text), [413], text);
    assert.doesNotMatch(text, /100 Continue/);
    assert.ok(closed);
  });

  test('an unknown expectation is ignored rather than answered with a bare 417', async () => {
    const { text } = await rawExchange(port, `${request('Expect: something-else\r\nConnection: close\r\n')}\r\n`);
    assert.deepEqual(statuses(text), [200], text);
  });

  test('Content-Length: 0 is no body: 200, and the connection stays open', async () => {
    const { text, closed } = await rawExchange(port, `${request('Content-Length: 0\r\n')}\r\n`, 400);
    assert.deepEqual(statuses(text), [200], text);
    assert.equal(closed, false);
  });

  test('a body on a method the route does not have is 405 (the more telling answer), and the connection closes', async () => {
    const { text, closed } = await rawExchange(port, `${request('Content-Length: 2\r\n', '/api/customers/1/orders', 'POST')}\r\n{}`);
    assert.deepEqual(statuses(text), [405], text);
    assert.match(parseRaw(text).head, /\r\nAllow: GET, HEAD(\r\n|$)/);
    assert.ok(closed);
  });

  test('a client sending its head one byte at a time is cut off by server.headersTimeoutMs with a 408 problem', async () => {
    const head = `${request()}\r\n`;
    // 50 ms a byte: the whole head would take far longer than the 500 ms allowed.
    const { text, closed } = await rawExchange(port, [...head], 15_000, 50);
    assert.ok(closed, 'the gateway closed the connection');
    assert.equal(parseRaw(text).status, 408, text);
    assert.equal(problemCode(text), 'HG_ERR_REQUEST_TIMEOUT');
    await stillServes();
  });
});

describe('keep-alive time-out', () => {
  let fx: Fixture;
  before(async () => {
    // A head time-out far beyond the test, so only server.keepAliveTimeoutMs can close the connection.
    fx = await startFixture({
      server: { keepAliveTimeoutMs: 200, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 },
      // Room for one 24 MB customer (the slow reader below), and time to send it on a busy machine.
      upstream: { maxResponseBytes: 64 * 1024 * 1024, timeoutMs: 60_000 },
      cache: { maxBytes: 256 * 1024 * 1024 },
    });
  });
  after(() => fx.close());

  test('an idle keep-alive connection is closed by the gateway after server.keepAliveTimeoutMs', async () => {
    const token = await fx.token();
    // Node's own default would keep it open 5 s; the wait below gives up before that.
    const { text, closed } = await rawExchange(fx.gw.port, `GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`, 4000);
    assert.deepEqual(statuses(text), [200], text);
    assert.match(parseRaw(text).head, /\r\nConnection: keep-alive(\r\n|$)/i);
    assert.ok(closed, 'the idle connection was closed');
  });

  const get = (token: string, id: number): string => `GET /api/customers/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  /** Statuses of answers that follow one another on a connection (a body does not end in CRLF). */
  const answers = (text: string): number[] => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

  test('a connection whose next request comes within the time-out stays open, request after request', async () => {
    const token = await fx.token();
    // Three requests 120 ms apart: 360 ms in all, each gap under the 200 ms time-out.
    const { text, closed } = await rawExchange(fx.gw.port, [get(token, 10), get(token, 10), get(token, 10)], 4000, 120);
    assert.deepEqual(answers(text), [200, 200, 200], text);
    assert.ok(closed, 'closed once idle after the last answer');
  });

  test('a request slower than the time-out is answered: a connection is idle only between answers', async () => {
    const token = await fx.token();
    fx.upstream.on('/customers/11', { kind: 'delay', ms: 600, then: { kind: 'json', body: { id: 11, name: 'Slow', status: 'active' } } });
    // A quick answer first, so the connection has been idle before the slow request arrives on it.
    const { text } = await rawExchange(fx.gw.port, [get(token, 14), get(token, 11)], 4000, 100);
    assert.deepEqual(answers(text), [200, 200], text);
    assert.match(text, /"name":"Slow"/);
  });

  test('a next request whose head begins within the time-out and ends after it is answered', async () => {
    const token = await fx.token();
    const next = get(token, 15);
    const half = next.length >> 1;
    // 150 ms apart: the first request, half of the next head (150 ms after the answer), the rest
    // (300 ms after it, past the 200 ms time-out): the bytes in between show the request has begun.
    const { text } = await rawExchange(fx.gw.port, [get(token, 15), next.slice(0, half), next.slice(half)], 4000, 150);
    assert.deepEqual(answers(text), [200, 200], text);
  });

  test('a cache hit too large for the socket buffers reaches a client that reads it late, whole', async () => {
    const token = await fx.token();
    const name = 'x'.repeat(24 * 1024 * 1024);
    fx.upstream.on('/customers/16', { kind: 'json', body: { id: 16, name, status: 'active' } });
    const miss = await rawExchange(fx.gw.port, get(token, 16), 60_000); // the miss, read at once: now cached
    assert.deepEqual(answers(miss.text), [200], miss.text.slice(0, 300));
    // The hit is answered (end() has queued it) at once, but most of it waits in the gateway while
    // the client reads nothing for 1 s, five time-outs: the connection must stay open until it is out.
    const received = await new Promise<number>((resolve) => {
      const socket = connect(fx.gw.port, '127.0.0.1');
      let bytes = 0;
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      socket.on('close', () => resolve(bytes));
      socket.on('error', () => {});
      socket.write(get(token, 16));
      socket.pause();
      setTimeout(() => socket.resume(), 1000);
      // The gateway closes the connection once the answer is out and it is idle; this only bounds a failure.
      setTimeout(() => socket.end(), 60_000).unref();
    });
    assert.ok(received > name.length, `received ${received} bytes of a body over ${name.length}`);
  });

  test('pipelined requests: the connection stays busy while a later one is still being answered', async () => {
    const token = await fx.token();
    fx.upstream.on('/customers/13', { kind: 'delay', ms: 600, then: { kind: 'json', body: { id: 13, name: 'Slow', status: 'active' } } });
    // Both sent at once: the first answer ends at once, the second 600 ms later.
    const { text } = await rawExchange(fx.gw.port, get(token, 12) + get(token, 13), 4000);
    assert.deepEqual(answers(text), [200, 200], text);
    assert.match(text, /"name":"Slow"/);
  });
});
