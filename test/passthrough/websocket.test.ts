import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { assertProblem, rawAnswer } from '../helpers/hostile.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function routes(filesUrl: string): unknown {
  return {
    upstreams: { files: { url: filesUrl } },
    routes: {
      socket: { path: '/api/ws/{room}', service: 'files', upstream: '/ws/{room}', scope: 'chat:use', websocket: true, idleTimeoutMs: 5000 },
    },
  };
}

/** A client's masked text frame (RFC 6455 section 5.2), short payloads only. */
function maskedText(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)))]);
}

/** Opens a socket, sends a handshake for `path`, and resolves with the socket and the head of the answer. */
function handshake(
  port: number,
  path: string,
  headers: Record<string, string>,
  key = randomBytes(16).toString('base64'),
): Promise<{ socket: Socket; head: string; rest: Buffer; key: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    socket.on('error', reject);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      resolve({ socket, head: received.subarray(0, end).toString('latin1'), rest: received.subarray(end + 4), key });
    };
    socket.on('data', onData);
    const lines = [
      `GET ${path} HTTP/1.1`,
      'Host: gateway',
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${key}`,
      'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** The next whole server frame's payload (unmasked, short). */
function nextFrame(socket: Socket, already: Buffer): Promise<string> {
  return new Promise((resolve) => {
    let buffered = already;
    const tryRead = (): boolean => {
      if (buffered.length < 2 || buffered.length < 2 + ((buffered[1] as number) & 0x7f)) return false;
      resolve(buffered.subarray(2, 2 + ((buffered[1] as number) & 0x7f)).toString());
      return true;
    };
    if (tryRead()) return;
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      if (tryRead()) socket.off('data', onData);
    };
    socket.on('data', onData);
  });
}

describe('a WebSocket route', () => {
  let fx: Fixture;
  let files: StreamUpstream;
  let log: CapturedLog;
  let token: string;

  before(async () => {
    files = await startStreamUpstream();
    log = captureLog();
    fx = await startFixture(routes(files.url), { logger: log.logger });
    token = await fx.token({ claims: { scope: 'chat:use customers:read' } });
  });
  after(async () => {
    await fx.close();
    await files.close();
  });

  test("tunnels an echo after the token is checked: the client's key is answered, frames go both ways, and the session is logged as 101", async () => {
    const { socket, head, rest, key } = await handshake(fx.gw.port, '/api/ws/lobby', { Authorization: `Bearer ${token}`, 'X-Request-Id': 'ws-session-1' });
    assert.match(head, /^HTTP\/1\.1 101 /);
    assert.match(
      head,
      new RegExp(
        `Sec-WebSocket-Accept: ${createHash('sha1')
          .update(key + GUID)
          .digest('base64')
          .replace(/[+/]/g, '\\$&')}`,
      ),
    );
    assert.match(head, /X-Request-Id: ws-session-1/);
    assert.equal(files.seen.at(-1)?.url, '/ws/lobby');
    assert.equal(files.seen.at(-1)?.headers.authorization, undefined, 'the service does not forward Authorization');
    for (const text of ['hello', 'again']) {
      const echo = nextFrame(socket, rest);
      socket.write(maskedText(text));
      assert.equal(await echo, text);
    }
    socket.destroy();
    await waitFor(() => {
      log.logger.flush?.();
      return log.records().some((r) => r['reqId'] === 'ws-session-1');
    }, "the session's access line");
    assert.equal(log.records().find((r) => r['reqId'] === 'ws-session-1')?.['status'], 101);
  });

  test('a handshake without a token is a 401 problem, and none reaches the upstream', async () => {
    const before = files.seen.length;
    const { socket, head } = await handshake(fx.gw.port, '/api/ws/lobby', {});
    socket.destroy();
    assert.match(head, /^HTTP\/1\.1 401 /);
    assert.match(head, /WWW-Authenticate: Bearer realm="hypergate"/i);
    assert.equal(files.seen.length, before);
  });

  test('an upstream that refuses the upgrade is passed on, and one that answers the wrong key is a 502: nothing is tunnelled', async () => {
    const refused = await handshake(fx.gw.port, '/api/ws/refuse', { Authorization: `Bearer ${token}` });
    refused.socket.destroy();
    assert.match(refused.head, /^HTTP\/1\.1 403 /);
    const wrong = await handshake(fx.gw.port, '/api/ws/wrong-accept', { Authorization: `Bearer ${token}` });
    wrong.socket.destroy();
    assert.match(wrong.head, /^HTTP\/1\.1 502 /);
  });

  test('a malformed handshake is a 400 problem', async () => {
    const res = await rawAnswer(
      fx.gw.port,
      `GET /api/ws/lobby HTTP/1.1\r\nHost: gw\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    assertProblem(res, { status: 400, code: 'HG_ERR_BAD_REQUEST' });
    assert.equal(res.closed, true);
  });

  test('a request that asks to upgrade anywhere else is answered as a plain request, and its connection closed', async () => {
    const res = await rawAnswer(
      fx.gw.port,
      `GET /api/customers/42 HTTP/1.1\r\nHost: gw\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.text) as { id: number }).id, 42);
    assert.equal(res.headers['connection'], 'close');
    assert.equal(res.closed, true);
  });
});
