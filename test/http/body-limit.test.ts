import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signToken } from '../helpers/keys.ts';
import { startMainWorld, type MainWorld } from '../helpers/main-world.ts';

/** The largest resident set a process has had so far (VmHWM), in bytes (Linux /proc). */
function peakRssOf(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmHWM:')) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
}

/**
 * Sets the process's peak resident set (VmHWM) back to its resident set now (proc(5), clear_refs
 * "5"), so a peak read afterwards is what came after, not what start-up once reached: a start-up
 * peak above the burst's would hide whatever the burst costs.
 */
function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
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
    socket.write(
      `POST /api/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
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

  test('8 MB bodies are refused with 413 while they stream, and the gateway does not grow by them', async () => {
    const token = await signToken(world.key, { claims: { scope: 'customers:read customers:write' } });
    const port = Number(new URL(world.base).port);
    const pid = world.servingPids()[0] as number;
    // Warm-up: whatever first requests allocate, and the heap settling at its working size.
    for (let i = 0; i < 8; i++) assert.match(await streamBody(port, token, 8 * 1024 * 1024), /^HTTP\/1\.1 413 /);
    resetPeakRss(pid);
    const before = peakRssOf(pid);
    // 24 at once, 192 MB in flight: a gateway that kept each body to its end before refusing it
    // grew by ~90 MB here. One that drops them still holds the read buffers it has not collected
    // yet: up to ~30 MB measured on a busy machine, for 2 MB bodies as for 8 MB ones.
    const answers = await Promise.all(Array.from({ length: 24 }, () => streamBody(port, token, 8 * 1024 * 1024)));
    for (const answer of answers) assert.match(answer, /^HTTP\/1\.1 413 /);
    const grown = peakRssOf(pid) - before;
    assert.ok(grown < 64 * 1024 * 1024, `peak RSS grew by ${Math.round(grown / 1024)} KiB for 192 MB sent at once`);
    assert.equal(world.upstream.requests.length, 0);
  });
});
