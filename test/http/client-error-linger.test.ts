import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { suiteFixture } from '../helpers/hostile.ts';
import { waitFor } from '../helpers/wait.ts';

/** The gateway's linger in these tests: 5 s in production (body.ts LINGER_MS). */
const LINGER_MS = 500;

/** A client that keeps its sending side open after the server's FIN (as a half-closing client may), and what it has read so far. */
interface HalfOpenClient {
  readonly socket: Socket;
  read(): string;
  /** Resolves when the server has closed the connection for good. */
  readonly closed: Promise<void>;
}

function halfOpenClient(port: number): HalfOpenClient {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<void>((resolve) => {
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
  });
  return { socket, read: () => Buffer.concat(chunks).toString('latin1'), closed };
}

/**
 * Resolves true when the server has closed the connection within `ms`. The server's FIN comes
 * with its problem already (socket.end), so only a write tells whether it still reads: once it has
 * closed for good, a byte sent gets a reset. A byte is sent every 200 ms from `fromMs` on.
 */
async function serverClosesWithin(client: HalfOpenClient, ms: number, fromMs = 0): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let probe: NodeJS.Timeout | undefined;
  const start = setTimeout(() => {
    probe = setInterval(() => {
      if (!client.socket.destroyed && client.socket.writable) client.socket.write('x');
    }, 200);
  }, fromMs);
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([client.closed.then(() => true), late]);
  clearTimeout(timer);
  clearTimeout(start);
  clearInterval(probe);
  return result;
}

/**
 * After a problem for bytes node:http could not parse (or a request that timed out mid-body), the
 * connection is closed after the linger (body.ts LINGER_MS, shortened here to LINGER_MS) whatever
 * the client does: a client that keeps trickling bytes, or never closes its side, does not hold it open.
 */
describe('the connection after a problem for unparsable bytes', () => {
  const w = suiteFixture({ server: { headersTimeoutMs: 300, requestTimeoutMs: 600 } }, { lingerMs: LINGER_MS });

  test('is closed after the linger while the client keeps trickling bytes', async (t) => {
    const client = halfOpenClient(w.fx.gw.port);
    t.after(() => client.socket.destroy());
    client.socket.write('NOT HTTP\r\n\r\n');
    await waitFor(() => client.read().includes('"status":400'), 'the 400 problem', 5000);
    assert.equal(await serverClosesWithin(client, LINGER_MS + 3000), true, 'the server closed the connection');
    assert.match(client.read(), /^HTTP\/1\.1 400 /);
  });

  test('is closed after the linger when the client never closes its side', async (t) => {
    const client = halfOpenClient(w.fx.gw.port);
    t.after(() => client.socket.destroy());
    client.socket.write('NOT HTTP\r\n\r\n');
    // Silent until the linger is over; then a byte tells whether the server still reads.
    assert.equal(await serverClosesWithin(client, LINGER_MS + 3000, LINGER_MS + 500), true, 'the server closed the connection');
    assert.match(client.read(), /^HTTP\/1\.1 400 /);
  });

  test('a write told 408 before its body arrived is not sent upstream when the rest of the body comes', async (t) => {
    const writer = await w.fx.token({ claims: { scope: 'customers:read customers:write' } });
    const body = JSON.stringify({ name: 'Late', status: 'active' });
    const client = halfOpenClient(w.fx.gw.port);
    t.after(() => client.socket.destroy());
    const posts = (): number => w.fx.upstream.requests.filter((r) => r.method === 'POST').length;
    const before = posts();
    client.socket.write(
      `POST /api/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${writer}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await waitFor(() => client.read().includes('"status":408'), 'the 408 problem', 5000);
    client.socket.write(body.slice(5));
    // The connection closes after the linger: by then the body has long been read whole.
    assert.equal(await serverClosesWithin(client, LINGER_MS + 3000, LINGER_MS + 500), true, 'the server closed the connection');
    assert.equal(posts(), before, 'the upstream never saw the write its client was told timed out');
    assert.match(client.read(), /^HTTP\/1\.1 408 /);
    assert.doesNotMatch(client.read(), /HTTP\/1\.1 201 /);
  });
});

describe('a kept-alive connection whose writes are refused before their bodies arrive', () => {
  const w = suiteFixture();

  test('keeps no listener per refused write once each body has been read to its end', async (t) => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    t.after(() => process.off('warning', onWarning));
    const client = halfOpenClient(w.fx.gw.port);
    t.after(() => client.socket.destroy());
    const body = JSON.stringify({ name: 'Nobody', status: 'active' });
    const answers = (): number => client.read().split('HTTP/1.1 401 ').length - 1;
    for (let i = 1; i <= 15; i++) {
      // No token: refused (401) on its head; its body, sent after the answer, is read and dropped.
      client.socket.write(`POST /api/customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      await waitFor(() => answers() === i, `answer ${i}`, 5000);
      client.socket.write(body);
    }
    // The connection is still kept: a read on it is answered.
    client.socket.write(`GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.token}\r\n\r\n`);
    await waitFor(() => client.read().includes('HTTP/1.1 200 '), 'the read after the refused writes', 5000);
    assert.deepEqual(
      warnings.filter((x) => x.name === 'MaxListenersExceededWarning').map((x) => x.message),
      [],
    );
  });
});
