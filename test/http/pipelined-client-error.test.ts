import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rawExchange } from '../helpers/gateway.ts';
import { assertProblem, suiteFixture } from '../helpers/hostile.ts';

/** Each message in a raw byte stream, split where the next status line starts. */
function messages(text: string): string[] {
  return text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((m) => m.length > 0);
}

/** Status, lower-case headers and body of one raw message. */
function parts(message: string): { status: number; headers: Record<string, string>; text: string } {
  const end = message.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = message.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text: message.slice(end + 4) };
}

/**
 * RFC 9112 section 9.3.2: answers to pipelined requests go out in the order the requests came.
 * Bytes that are not HTTP after good requests on one connection refuse only themselves: every
 * request before them gets its own answer first, and the 400 comes last.
 */
describe('unparsable bytes pipelined after good requests', () => {
  const w = suiteFixture();
  const get = (id: number): string => `GET /api/customers/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.token}\r\n\r\n`;
  const garbage = 'NOT HTTP AT ALL\r\n\r\n';

  function assertAnswersThenBadRequest(text: string, ids: number[]): void {
    const all = messages(text).map(parts);
    assert.deepEqual(
      all.map((m) => m.status),
      [...ids.map(() => 200), 400],
      text,
    );
    ids.forEach((id, i) => assert.equal((JSON.parse(all[i]?.text ?? '') as { id: number }).id, id));
    const last = all[ids.length];
    assert.ok(last !== undefined);
    assertProblem(last, { status: 400, code: 'HG_ERR_BAD_REQUEST', headers: { connection: 'close' } });
  }

  test('a request still waiting for the upstream gets its own answer, not the 400 meant for the bytes after it', async () => {
    const { text, closed } = await rawExchange(w.fx.gw.port, get(7) + garbage, 4000);
    assert.equal(closed, true);
    assertAnswersThenBadRequest(text, [7]);
  });

  test('a cache hit answered at once is followed by the 400 for the bytes after it', async () => {
    await rawExchange(w.fx.gw.port, `GET /api/customers/8 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.token}\r\nConnection: close\r\n\r\n`);
    const { text, closed } = await rawExchange(w.fx.gw.port, get(8) + garbage, 4000);
    assert.equal(closed, true);
    assertAnswersThenBadRequest(text, [8]);
  });

  test('several requests answered out of order are all answered, in order, before the 400', async () => {
    w.fx.upstream.on('/customers/9', { kind: 'delay', ms: 200, then: { kind: 'json', body: { id: 9, name: 'Slow', status: 'active' } } });
    const { text, closed } = await rawExchange(w.fx.gw.port, get(9) + get(10) + get(11) + garbage, 4000);
    assert.equal(closed, true);
    assertAnswersThenBadRequest(text, [9, 10, 11]);
  });

  test('a write whose chunked body is malformed gets the 400 itself, at once', async () => {
    const writer = await w.fx.token({ claims: { scope: 'customers:read customers:write' } });
    const post = `POST /api/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${writer}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`;
    const { text, closed } = await rawExchange(w.fx.gw.port, get(12) + post, 4000);
    assert.equal(closed, true);
    assertAnswersThenBadRequest(text, [12]);
  });
});
