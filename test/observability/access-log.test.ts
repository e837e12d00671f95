import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AccessLogWriter, millis } from '../../src/observability/access-log.ts';
import type { AccessLine } from '../../src/observability/logger.ts';

const line = (over: Partial<AccessLine> = {}): AccessLine => ({
  reqId: 'abc-1',
  method: 'GET',
  path: '/api/customers/1',
  status: 200,
  bytes: 118,
  ms: 0.25,
  upstreamMs: undefined,
  cache: 'hit',
  sub: 'alice',
  ...over,
});

describe('access log writer', () => {
  it('with no delay, writes each line at once', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0);
    writer.write(line({ reqId: 'a' }));
    writer.write(line({ reqId: 'b' }));
    assert.deepEqual(chunks.map((c) => (JSON.parse(c) as { reqId: string }).reqId), ['a', 'b']);
  });

  it('with a delay, holds the lines of several turns, then writes them as one chunk', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 10_000);
    writer.write(line({ reqId: 'a' }));
    await nextTurn();
    writer.write(line({ reqId: 'b' }));
    await nextTurn();
    assert.equal(chunks.length, 0, 'nothing is written before the delay');
    writer.flush();
    assert.equal(chunks.length, 1);
    assert.equal((chunks[0] as string).trimEnd().split('\n').length, 2);
  });

  it('writes pending lines once the delay has passed, with no further request', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 20);
    writer.write(line());
    for (let waited = 0; chunks.length === 0 && waited < 5000; waited += 10) await new Promise((done) => setTimeout(done, 10));
    assert.equal(chunks.length, 1);
  });

  it('writes pino-shaped JSON, omitting absent fields and escaping client-controlled ones', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')));
    writer.write(line({ path: '/api/"quoted"\\/\u00e9\u2028', sub: 'x"\n}{', upstreamMs: 1.5, cache: undefined, method: undefined }));
    writer.flush();
    const text = chunks.join('');
    assert.equal(text.endsWith('}\n'), true);
    assert.equal(text.split('\n').length, 2, 'one line, whatever the path and subject hold');
    const record = JSON.parse(text) as Record<string, unknown>;
    assert.equal(record['level'], 30);
    assert.equal(typeof record['time'], 'number');
    assert.equal(record['msg'], 'request');
    assert.equal(record['path'], '/api/"quoted"\\/\u00e9\u2028');
    assert.equal(record['sub'], 'x"\n}{');
    assert.equal(record['upstreamMs'], 1.5);
    assert.equal('cache' in record, false);
    assert.equal('method' in record, false);
  });

  it('flush writes what is pending at once, and a large burst is written before the turn ends', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')));
    writer.write(line());
    writer.flush();
    assert.equal(chunks.length, 1);
    for (let i = 0; i < 2000; i++) writer.write(line({ reqId: `r${i}` }));
    assert.ok(chunks.length >= 2, 'a batch past the size bound is written without waiting');
    writer.flush();
    const total = chunks.join('').trimEnd().split('\n').length;
    assert.equal(total, 2001);
  });

  it('writes nothing when disabled (log.level silent)', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')));
    writer.enabled = false;
    writer.write(line());
    writer.flush();
    await nextTurn();
    assert.deepEqual(chunks, []);
  });
});

describe('millis', () => {
  it('writes a duration in ms with up to three decimals, as JSON reads it back', () => {
    for (const [ms, text] of [[0, '0.000'], [0.0004, '0.000'], [0.0005, '0.001'], [0.05, '0.050'], [1.5, '1.500'], [12.3456, '12.346'], [999.9999, '1000.000'], [61234.5, '61234.500']] as const) {
      assert.equal(millis(ms), text, `${ms}`);
      assert.equal(JSON.parse(millis(ms)), Number(text));
    }
  });
});
