import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signToken } from '../helpers/keys.ts';
import { startMainWorld, type MainWorld } from '../helpers/main-world.ts';

/** The largest resident set a process has had so far (VmHWM), in bytes (Linux /proc). */
function peakRssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:')) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
}

/**
 * Streams `bytes` of body (chunked: no Content-Length to refuse it by) at the gateway and returns
 * the status line it answered with; the gateway may close before the client has sent everything.
 */
function streamBody(port: number, token: string, bytes: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(answer.split('\r\n', 1)[0] ?? ''));
    socket.write(`POST /api/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes && !socket.destroyed) {
        sent += chunk.length;
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        if (!socket.write('\r\n')) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed) socket.end('0\r\n\r\n');
    };
    pump();
  });
}

describe('request bodies are bounded by server.maxBodyBytes in a real process', () => {
  let world: MainWorld;
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-body-'));
  before(async () => {
    // A young generation of 1 MB: bytes read and dropped at once cannot pass for memory kept.
    world = await startMainWorld(dir, 'body', { env: { NODE_OPTIONS: '--max-semi-space-size=1' } });
  });
  after(async () => {
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('2 MB bodies are refused with 413 while they stream, and the gateway does not grow by them', async () => {
    const token = await signToken(world.key, { claims: { scope: 'customers:read customers:write' } });
    const port = Number(new URL(world.base).port);
    const pid = world.servingPids()[0] as number;
    // Warm-up: whatever first requests allocate, and the heap settling at its working size.
    for (let i = 0; i < 8; i++) assert.match(await streamBody(port, token, 2 * 1024 * 1024), /^HTTP\/1\.1 413 /);
    const before = peakRssOf(pid);
    // 24 at once, 48 MB in flight: a gateway that kept bodies would hold them all at the same time.
    const answers = await Promise.all(Array.from({ length: 24 }, () => streamBody(port, token, 2 * 1024 * 1024)));
    for (const answer of answers) assert.match(answer, /^HTTP\/1\.1 413 /);
    const grown = peakRssOf(pid) - before;
    assert.ok(grown < 16 * 1024 * 1024, `peak RSS grew by ${Math.round(grown / 1024)} KiB for 48 MB sent at once`);
    assert.equal(world.upstream.requests.length, 0);
  });
});
