import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { captureLog } from '../helpers/log.ts';
import { defaultRecord } from '../helpers/upstream.ts';
import { waitFor } from '../helpers/wait.ts';

/** Each answer carries ~60 KB, so a few hundred of them are more than the kernel buffers of both ends hold. */
const NOTES = 'n'.repeat(60_000);

/** A real gateway whose customer 1 answers with ~60 KB; `server` overrides its server.* keys. */
async function bigAnswers(server: Record<string, unknown>, logger = captureLog().logger): Promise<{ fx: Fixture; request: string }> {
  const fx = await startFixture(
    // The head and request time-outs far beyond the test: only server.sendTimeoutMs may close a connection.
    { server: { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 0, ...server }, resources: { customers: { exposeFields: ['notes'] } } },
    { logger },
  );
  fx.upstream.on('/customers/1', { kind: 'json', body: { ...defaultRecord(1), notes: NOTES } });
  const request = `GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${await fx.token()}\r\n\r\n`;
  return { fx, request };
}

/** The gateway's side of the next connection made to it. */
function nextServerSocket(fx: Fixture): Promise<Socket> {
  return once(fx.gw.gateway.server, 'connection').then(([socket]) => socket as Socket);
}

/** A client connection that sends `count` pipelined requests at once and reads nothing until told. */
function pipeline(fx: Fixture, request: string, count: number): Socket {
  const client = connect(fx.gw.port, '127.0.0.1');
  client.pause();
  client.on('error', () => {}); // reset by the gateway when it cuts the connection
  client.write(request.repeat(count));
  return client;
}

describe('server.sendTimeoutMs: a client that never reads its answers', () => {
  test('is cut off once its answers have not moved for the time-out', async (t) => {
    const { fx, request } = await bigAnswers({ sendTimeoutMs: 500 });
    t.after(() => fx.close());
    const server = nextServerSocket(fx);
    const client = pipeline(fx, request, 400);
    t.after(() => client.destroy());
    const socket = await server;
    const closed = once(socket, 'close');
    await waitFor(() => socket.writableLength > 0, 'answers waiting for the client to read');
    const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still open'), 15_000))]);
    assert.equal(outcome, 'closed');
  });

  test('a client that keeps reading, slower than the gateway writes, is not cut and gets every answer', async (t) => {
    const { fx, request } = await bigAnswers({ sendTimeoutMs: 1000 });
    t.after(() => fx.close());
    const count = 200;
    const client = pipeline(fx, request, count);
    t.after(() => client.destroy());
    // 64 KB every 10 ms at most: the ~12 MB take over a second and a half, longer than the time-out.
    let received = 0;
    let text = '';
    const reader = setInterval(() => {
      const chunk = client.read(65_536) as Buffer | null;
      if (chunk === null) return;
      received += chunk.length;
      text += chunk.toString('latin1', 0, Math.min(chunk.length, 64));
    }, 10);
    t.after(() => clearInterval(reader));
    const expected = count * NOTES.length;
    await waitFor(() => received >= expected || client.destroyed, 'every answer, or the connection cut', 60_000);
    assert.equal(client.destroyed, false, 'the connection is still open');
    assert.ok(received >= expected, `received ${received} bytes`);
    assert.ok(text.startsWith('HTTP/1.1 200 '));
  });
});
