import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { Deadline } from '../../src/lib/deadline.ts';
import { Exchange, exchangeFailure, startExchange, type PlanBody } from '../../src/lib/exchange.ts';

const keepAll: PlanBody = () => 'keep';
const drainAll: PlanBody = () => 'drain';

/** A small upstream whose answer per path the test sets; it counts what reached it. */
describe('an upstream exchange (undici dispatch handler) against a real server', () => {
  let server: Server;
  let pool: Pool;
  const reached: string[] = [];
  const hanging: ServerResponse[] = [];
  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      reached.push(req.url ?? '');
      if (req.url === '/hang') return void hanging.push(res);
      if (req.url === '/pieces') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const pieces = ['{"id":', '7,"name"', ':"Ada L', 'ovelace","status":"ac', 'tive"}'];
        const next = (): void => {
          const piece = pieces.shift();
          if (piece === undefined) return void res.end();
          res.write(piece);
          setTimeout(next, 5);
        };
        return next();
      }
      if (req.url === '/hints') {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"ok":true}');
      }
      if (req.url === '/big-404') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end('x'.repeat(1024 * 1024));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":1}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1, pipelining: 1 });
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    await pool.close();
    server.close();
    server.closeAllConnections();
  });

  function send(path: string, plan: PlanBody, limit = 4096): Exchange {
    const exchange = new Exchange(limit, plan);
    pool.dispatch({ path, method: 'GET', headers: { accept: 'application/json' } }, exchange);
    return exchange;
  }

  test('a body written in five pieces is handed over whole', async () => {
    const answer = await send('/pieces', keepAll).answer;
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body?.toString('utf8') ?? ''), { id: 7, name: 'Ada Lovelace', status: 'active' });
  });

  test('an informational 103 before the answer is skipped: the 200 and its body are what settle', async () => {
    // A plan that refuses anything but a 200 would drop the connection had it seen the 103.
    const exchange = send('/hints', (status) => (status === 200 ? 'keep' : 'refuse'));
    const answer = await exchange.answer;
    assert.equal(answer.status, 200);
    assert.equal(exchange.status, 200);
    assert.equal(answer.body?.toString('utf8'), '{"ok":true}');
  });

  test('a drained body over the limit settles with its status and no body, and the pool goes on serving', async () => {
    const answer = await send('/big-404', drainAll, 4096).answer;
    assert.equal(answer.status, 404);
    assert.equal(answer.body, null);
    assert.equal((await send('/after-404', keepAll).answer).body?.toString('utf8'), '{"ok":1}');
  });

  test('a kept body over the limit settles with no body (too large), not with a truncated one', async () => {
    const answer = await send('/pieces', keepAll, 10).answer;
    assert.equal(answer.status, 200);
    assert.equal(answer.body, null);
  });

  test('an exchange aborted while it waits for the only connection fails at once and never reaches the upstream', async () => {
    reached.length = 0;
    const holding = send('/hang', keepAll);
    while (hanging.length === 0) await sleep(5);
    const queued = send('/queued', keepAll);
    const reason = new Error('deadline');
    queued.abort(reason);
    await assert.rejects(queued.answer, (err) => err === reason);
    holding.abort(new Error('deadline'));
    await assert.rejects(holding.answer, /deadline/);
    // The connection is free again: a later exchange is served, and the aborted one was never sent.
    assert.equal((await send('/later', keepAll).answer).status, 200);
    assert.deepEqual(reached, ['/hang', '/later']);
  });

  test('an abort after the answer settled changes nothing', async () => {
    const exchange = send('/settled', keepAll);
    const answer = await exchange.answer;
    exchange.abort(new Error('too late'));
    assert.equal(answer.status, 200);
    assert.equal(answer.body?.toString('utf8'), '{"ok":1}');
  });
});

/**
 * The bounded exchange the upstream client and the key set fetch share: one request under one
 * deadline, and its failure told by kind (time-out, refused, connection lost, other).
 */
describe('a bounded exchange', () => {
  let server: Server;
  let origin: string;
  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/reset') return void req.socket.destroy();
      if (req.url === '/drip') {
        // A body that never ends, a byte at a time: undici's gap time-outs never fire; the deadline does.
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), 10);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":1}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  // Cuts the dripping answers too (their timers stop on 'close').
  after(() => server.close().closeAllConnections());

  /** Runs one exchange on a pool of its own and gives back its answer or its failure's kind. */
  async function exchange(
    path: string,
    deadlineMs: number,
    at = origin,
  ): Promise<{ status: number; body: string | undefined } | { failure: string; deadlinePassed: boolean }> {
    const pool = new Pool(at, { connections: 1 });
    const deadline = new Deadline(deadlineMs, 'the test deadline passed');
    try {
      const answer = await startExchange(pool, { path, method: 'GET', headers: ['accept', 'application/json'] }, 4096, keepAll, deadline).answer;
      return { status: answer.status, body: answer.body?.toString('utf8') };
    } catch (err) {
      return { failure: exchangeFailure(err, deadline), deadlinePassed: deadline.passed };
    } finally {
      deadline.clear();
      await pool.destroy();
    }
  }

  test('an answer within the deadline is handed over', async () => {
    assert.deepEqual(await exchange('/ok', 10_000), { status: 200, body: '{"ok":1}' });
  });

  test('a body dripped past the deadline is a time-out, though bytes keep coming', async () => {
    assert.deepEqual(await exchange('/drip', 200), { failure: 'timeout', deadlinePassed: true });
  });

  test('a connection the server resets before answering is lost', async () => {
    assert.deepEqual(await exchange('/reset', 10_000), { failure: 'lost', deadlinePassed: false });
  });

  test('a port nobody listens on is refused', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    assert.deepEqual(await exchange('/', 10_000, `http://127.0.0.1:${port}`), { failure: 'refused', deadlinePassed: false });
  });

  test("undici's own connect, head and body time-outs count as time-outs; other errors as other", () => {
    const deadline = new Deadline(60_000, 'unused');
    deadline.clear();
    for (const code of ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])
      assert.equal(exchangeFailure({ code }, deadline), 'timeout', code);
    for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']) assert.equal(exchangeFailure({ code }, deadline), 'lost', code);
    assert.equal(exchangeFailure(new Error('no code'), deadline), 'other');
    assert.equal(exchangeFailure(null, deadline), 'other');
    assert.equal(exchangeFailure({ code: 'ENOTFOUND' }, deadline), 'other');
  });
});
