import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, openSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { WriteStream } from 'node:tty';
import { makeNonBlocking, unsentBytes } from '../../src/lib/libuv-handle.ts';

/**
 * What src/lib/libuv-handle.ts reads of Node's undocumented socket handle still exists and means
 * what it did: these fail the day Node changes it, before the send time-out or a terminal's
 * non-blocking log writes quietly stop working.
 */
describe("Node's libuv stream handle", () => {
  test('counts the bytes of a write the kernel has not taken yet, and none once they are written', async (t) => {
    const server = createServer({ pauseOnConnect: true });
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const { port } = server.address() as { port: number };
    const client = connect(port, '127.0.0.1');
    t.after(() => client.destroy());
    await once(client, 'connect');
    const [peer] = await accepted;
    t.after(() => peer.destroy());
    assert.equal(unsentBytes(client), 0);
    // More than the kernel's socket buffers take while the peer reads nothing.
    const size = 32 * 1024 * 1024;
    client.write(Buffer.alloc(size));
    const queued = unsentBytes(client);
    assert.ok(queued > 0 && queued <= size, `bytes libuv still holds: ${queued}`);
    peer.on('data', () => {});
    peer.resume();
    await once(client, 'drain');
    assert.equal(unsentBytes(client), 0);
  });

  test('switches a terminal back to non-blocking writes', { skip: !existsSync('/dev/ptmx') && 'no pseudo-terminal device' }, () => {
    // The controlling side of a new pseudo-terminal: a terminal no other process writes to.
    const tty = new WriteStream(openSync('/dev/ptmx', 'r+'));
    try {
      assert.equal(makeNonBlocking(tty), true);
    } finally {
      tty.destroy();
    }
  });
});
