import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { MAX_PENDING_PER_CONNECTION } from '../../src/http/keep-alive.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';
import { defaultRecord } from '../helpers/upstream.ts';
import { waitFor } from '../helpers/wait.ts';

/** Each answer carries ~60 KB, so a few hundred of them are more than the kernel buffers of both ends hold. */
const NOTES = 'n'.repeat(60_000);

/**
 * A real gateway whose customer 1 answers with ~60 KB; `server` overrides its server.* keys.
 * `warm`: the token and the customer are cached first, so every pipelined request is answered at
 * once (a cache hit) and none waits for another.
 */
async function bigAnswers(
  server: Record<string, unknown>,
  options: { logger?: Logger; warm?: boolean; notes?: string } = {},
): Promise<{ fx: Fixture; request: string }> {
  const fx = await startFixture(
    // The head and request time-outs far beyond the test: only server.sendTimeoutMs may close a connection.
    { server: { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 0, ...server }, resources: { customers: { exposeFields: ['notes'] } } },
    { logger: options.logger ?? captureLog().logger },
  );
  fx.upstream.on('/customers/1', { kind: 'json', body: { ...defaultRecord(1), notes: options.notes ?? NOTES } });
  const token = await fx.token();
  if (options.warm !== false) assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
  const request = `GET /api/customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  return { fx, request };
}

/** 'closed' once the gateway closes the connection, 'still open' if it has not after 15 s. */
function closedWithin15s(socket: Socket): Promise<string> {
  return Promise.race([once(socket, 'close').then(() => 'closed'), new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 15_000).unref())]);
}

/**
 * A client connection that sends `count` pipelined requests at once and reads nothing until told,
 * and the gateway's side of it.
 */
async function pipeline(t: { after(fn: () => unknown): void }, fx: Fixture, request: string, count: number): Promise<{ client: Socket; socket: Socket }> {
  const accepted = once(fx.gw.gateway.server, 'connection');
  const client = connect(fx.gw.port, '127.0.0.1');
  t.after(() => client.destroy());
  client.pause();
  client.on('error', () => {}); // reset by the gateway when it cuts the connection
  client.write(request.repeat(count));
  const [socket] = (await accepted) as [Socket];
  return { client, socket };
}

describe('server.sendTimeoutMs: a client that never reads its answers', () => {
  test('is cut off once its answers have not moved for the time-out', async (t) => {
    const { fx, request } = await bigAnswers({ sendTimeoutMs: 500 });
    t.after(() => fx.close());
    const { socket } = await pipeline(t, fx, request, 400);
    const closed = closedWithin15s(socket);
    await waitFor(() => socket.writableLength > 0, 'answers waiting for the client to read');
    assert.equal(await closed, 'closed');
  });

  test('a client that keeps reading, slower than the gateway writes, is not cut and gets every answer', async (t) => {
    const { fx, request } = await bigAnswers({ sendTimeoutMs: 1000 });
    t.after(() => fx.close());
    const count = 200;
    const { client } = await pipeline(t, fx, request, count);
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

  test('costs the gateway a bounded amount before the time-out: Node stops reading it once an answer waits', async (t) => {
    const log = captureLog();
    const { fx, request } = await bigAnswers({ sendTimeoutMs: 0 }, { logger: log.logger });
    t.after(() => fx.close());
    const sent = 2000;
    const { socket } = await pipeline(t, fx, request, sent);
    await waitFor(() => socket.isPaused() && socket.writableLength > 0, 'the gateway to stop reading the connection');
    const answered = log.records().filter((r) => r['msg'] === 'request').length;
    assert.ok(answered < sent / 2, `${answered} of ${sent} requests were read and answered; the rest must wait unread`);
    assert.ok(socket.bytesRead < Buffer.byteLength(request) * sent, 'the requests past those were left unread');
    assert.ok(socket.writableLength <= 512 * 1024, `${socket.writableLength} bytes wait in the gateway for the client`);
  });

  test(`answers no more than ${MAX_PENDING_PER_CONNECTION} of its requests that must wait (token checks, misses): the next gets 503 and the connection closes`, async (t) => {
    const log = captureLog();
    // A token not verified yet and an uncached customer: every answer waits for both.
    const { fx, request } = await bigAnswers({ sendTimeoutMs: 0 }, { logger: log.logger, warm: false, notes: 'n'.repeat(1000) });
    t.after(() => fx.close());
    const sent = 2000;
    const { client, socket } = await pipeline(t, fx, request, sent);
    assert.equal(await closedWithin15s(socket), 'closed');
    const answered = log.records().filter((r) => r['msg'] === 'request').length;
    assert.ok(answered < sent / 2, `${answered} of ${sent} requests were read and worked on`);
    // What the gateway wrote before closing: the answers in order, the refusal last.
    client.resume();
    const chunks: Buffer[] = [];
    client.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(client, 'close');
    const statuses = [
      ...Buffer.concat(chunks)
        .toString('latin1')
        .matchAll(/HTTP\/1\.1 (\d{3}) /g),
    ].map((m) => Number(m[1]));
    assert.equal(statuses.at(-1), 503);
    assert.deepEqual(
      statuses.slice(0, -1).filter((s) => s !== 200),
      [],
      'every answer before the refusal is a 200',
    );
    assert.ok(statuses.length <= MAX_PENDING_PER_CONNECTION + 1, `${statuses.length} answers`);
    assert.match(Buffer.concat(chunks).toString('latin1'), /"code":"HG_ERR_PIPELINE_TOO_DEEP"/);
  });
});
