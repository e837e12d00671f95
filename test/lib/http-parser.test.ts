import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { msSinceRequestBegan } from '../../src/lib/http-parser.ts';

/**
 * What src/lib/http-parser.ts reads of Node's undocumented HTTP parser still exists and means what
 * it did: this fails the day Node changes it, before a write's body quietly stops being held to
 * server.requestTimeoutMs to the millisecond.
 */
describe("Node's HTTP parser of a server connection", () => {
  test("says how long ago the request's first byte came while its body is awaited, and 0 once it is complete", async (t) => {
    const seen: { atHead: number; atEnd: number }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      const atHead = msSinceRequestBegan(req.socket);
      req.resume();
      req.on('end', () => {
        seen.push({ atHead, atEnd: msSinceRequestBegan(req.socket) });
        res.end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1');
    t.after(() => socket.destroy());
    await once(socket, 'connect');
    // The first byte, then the rest of the head 300 ms later: the head came whole after that.
    socket.write('P');
    await sleep(300);
    socket.write('OST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{');
    await sleep(50);
    socket.write('}');
    await once(socket, 'data');
    const [first] = seen;
    assert.ok(first !== undefined);
    // A lower bound only: time measured after a wait is never less than the wait.
    assert.ok(first.atHead >= 290, `ms since the first byte when the head was parsed: ${first.atHead}`);
    assert.equal(first.atEnd, 0);
  });
});
