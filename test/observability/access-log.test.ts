import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import fc from 'fast-check';
import { AccessLogWriter } from '../../src/observability/access-log.ts';
import { jsonStringBound, putJsonString, putMillis, putUint } from '../../src/observability/json-bytes.ts';

interface Line {
  reqId: string;
  method: string | undefined;
  path: string;
  status: number;
  bytes: number;
  ms: number;
  upstreamMs: number;
  cache: string;
  sub: string | undefined;
  client: string | undefined;
  userAgent: string | undefined;
  endedAt: number;
}

const line = (over: Partial<Line> = {}): Line => ({
  reqId: 'abc-1',
  method: 'GET',
  path: '/api/customers/1',
  status: 200,
  bytes: 118,
  ms: 0.25,
  upstreamMs: -1,
  cache: 'hit',
  sub: 'alice',
  client: undefined,
  userAgent: undefined,
  endedAt: performance.now(),
  ...over,
});

/** The writer takes its fields as arguments (no object per request); tests name them. */
function put(writer: AccessLogWriter, l: Line): void {
  writer.write(l.reqId, l.method, l.path, l.status, l.bytes, l.ms, l.upstreamMs, l.cache, l.sub, l.client, l.userAgent, l.endedAt);
}

describe('access log writer', () => {
  it("writes an assembled answer's Embed-Status as embed, and nothing of it for other answers", () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0);
    const l = line();
    writer.write(
      l.reqId,
      l.method,
      l.path,
      l.status,
      l.bytes,
      l.ms,
      l.upstreamMs,
      l.cache,
      l.sub,
      l.client,
      l.userAgent,
      l.endedAt,
      'items.customer=omitted; reason=forbidden',
    );
    put(writer, line());
    const [embedded, plain] = chunks.map((c) => JSON.parse(c) as Record<string, unknown>);
    assert.equal(embedded?.['embed'], 'items.customer=omitted; reason=forbidden');
    assert.equal(plain !== undefined && 'embed' in plain, false);
  });

  it('with no delay, writes each line at once', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0);
    put(writer, line({ reqId: 'a' }));
    put(writer, line({ reqId: 'b' }));
    assert.deepEqual(
      chunks.map((c) => (JSON.parse(c) as { reqId: string }).reqId),
      ['a', 'b'],
    );
  });

  it('with a delay, holds the lines of several turns, then writes them as one chunk', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 10_000);
    put(writer, line({ reqId: 'a' }));
    await nextTurn();
    put(writer, line({ reqId: 'b' }));
    await nextTurn();
    assert.equal(chunks.length, 0, 'nothing is written before the delay');
    writer.flush();
    assert.equal(chunks.length, 1);
    assert.equal((chunks[0] as string).trimEnd().split('\n').length, 2);
  });

  it('writes pending lines once the delay has passed, with no further request', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 20);
    put(writer, line());
    for (let waited = 0; chunks.length === 0 && waited < 5000; waited += 10) await new Promise((done) => setTimeout(done, 10));
    assert.equal(chunks.length, 1);
  });

  it('writes pino-shaped JSON, omitting absent fields and escaping client-controlled ones', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')));
    put(writer, line({ path: '/api/"quoted"\\/\u00e9\u2028', sub: 'x"\n}{', upstreamMs: 1.5, cache: '', method: undefined }));
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

  it('keeps the UTF-8 bytes of a batch with a line that is not ASCII, and the batch after it intact', () => {
    const chunks: Buffer[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c), 10_000);
    put(writer, line({ sub: 'ascii' }));
    put(writer, line({ sub: 'Jos\u00e9 \u{1F600}' }));
    writer.flush();
    put(writer, line({ path: '/api/customers/7' }));
    writer.flush();
    const [first, second] = chunks.map((c) =>
      c
        .toString('utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
    assert.deepEqual(
      first?.map((r) => r['sub']),
      ['ascii', 'Jos\u00e9 \u{1F600}'],
      'the UTF-8 bytes decode to the subject',
    );
    assert.equal(second?.[0]?.['path'], '/api/customers/7');
  });

  it('stamps each line with the wall-clock time its request ended, taken from the monotonic clock', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0);
    const endedAt = performance.now();
    const wall = Date.now();
    put(writer, line({ endedAt }));
    put(writer, line({ endedAt: endedAt - 5000 }));
    const [now, earlier] = chunks.map((c) => (JSON.parse(c) as { time: number }).time);
    assert.ok(Math.abs((now as number) - wall) <= 2, `time ${now} is the wall clock (${wall})`);
    assert.ok(Math.abs((now as number) - (earlier as number) - 5000) <= 1, 'a request that ended 5 s earlier is stamped 5 s earlier');
  });

  it('writes a line longer than a whole batch on its own, after the lines before it', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 10_000);
    put(writer, line({ reqId: 'before' }));
    const path = `/api/${'\u00e9"'.repeat(20_000)}`;
    put(writer, line({ reqId: 'long', path }));
    put(writer, line({ reqId: 'after' }));
    writer.flush();
    const records = chunks
      .join('')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { reqId: string; path: string });
    assert.deepEqual(
      records.map((r) => r.reqId),
      ['before', 'long', 'after'],
    );
    assert.equal(records[1]?.path, path);
  });

  it('flush writes what is pending at once, and a large burst is written before the turn ends', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')));
    put(writer, line());
    writer.flush();
    assert.equal(chunks.length, 1);
    for (let i = 0; i < 2000; i++) put(writer, line({ reqId: `r${i}` }));
    assert.ok(chunks.length >= 2, 'a batch past the size bound is written without waiting');
    writer.flush();
    const total = chunks.join('').trimEnd().split('\n').length;
    assert.equal(total, 2001);
  });

  it('writes the query string apart from the path, and leaves an empty one out', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0);
    put(writer, line({ path: '/api/customers?offset=10&limit=5' }));
    put(writer, line({ path: '/api/customers/1?' }));
    put(writer, line({ path: '/a?q="\u00e9"' }));
    const [first, empty, escaped] = chunks.map((c) => JSON.parse(c) as Record<string, unknown>);
    assert.equal(first?.['path'], '/api/customers');
    assert.equal(first?.['query'], 'offset=10&limit=5');
    assert.equal(empty?.['path'], '/api/customers/1');
    assert.equal('query' in (empty ?? {}), false);
    assert.equal(escaped?.['query'], 'q="\u00e9"');
  });

  it('writes the client address and the user agent, escaped, and leaves out the ones not known', () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0);
    put(writer, line({ client: '203.0.113.7', userAgent: 'curl/8.5.0 "quoted" \u00e9' }));
    put(writer, line());
    const [known, unknown] = chunks.map((c) => JSON.parse(c) as Record<string, unknown>);
    assert.equal(known?.['client'], '203.0.113.7');
    assert.equal(known?.['userAgent'], 'curl/8.5.0 "quoted" \u00e9');
    assert.equal('client' in (unknown ?? {}), false);
    assert.equal('userAgent' in (unknown ?? {}), false);
  });

  it('names the cluster worker in every line, and no worker in a single process', () => {
    const chunks: string[] = [];
    new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0, 3).write(
      'a',
      'GET',
      '/',
      200,
      0,
      0,
      -1,
      '',
      undefined,
      undefined,
      undefined,
      performance.now(),
    );
    new AccessLogWriter((c) => chunks.push(c.toString('utf8')), 0).write(
      'b',
      'GET',
      '/',
      200,
      0,
      0,
      -1,
      '',
      undefined,
      undefined,
      undefined,
      performance.now(),
    );
    const [worker, single] = chunks.map((c) => JSON.parse(c) as Record<string, unknown>);
    assert.equal(worker?.['worker'], 3);
    assert.equal('worker' in (single ?? {}), false);
  });

  it('writes nothing when disabled (log.level silent)', async () => {
    const chunks: string[] = [];
    const writer = new AccessLogWriter((c) => chunks.push(c.toString('utf8')));
    writer.enabled = false;
    put(writer, line());
    writer.flush();
    await nextTurn();
    assert.deepEqual(chunks, []);
  });
});

describe('JSON bytes', () => {
  const text = (write: (buf: Buffer) => number): string => {
    const buf = Buffer.alloc(4096);
    return buf.toString('utf8', 0, write(buf));
  };

  it('writes a duration in ms with three decimals, rounded to the microsecond, as JSON reads it back', () => {
    for (const [ms, want] of [
      [0, '0.000'],
      [0.0004, '0.000'],
      [0.0005, '0.001'],
      [0.05, '0.050'],
      [1.5, '1.500'],
      [12.3456, '12.346'],
      [999.9999, '1000.000'],
      [61234.5, '61234.500'],
    ] as const) {
      assert.equal(
        text((b) => putMillis(b, 0, ms)),
        want,
        `${ms}`,
      );
    }
  });

  it('writes integers up to 2^53 in decimal', () => {
    for (const n of [0, 7, 10, 200, 1_763_900_000_123, Number.MAX_SAFE_INTEGER])
      assert.equal(
        text((b) => putUint(b, 0, n)),
        String(n),
      );
  });

  it('writes any string as the JSON string JSON.stringify would, within jsonStringBound', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ maxLength: 60 })), (s) => {
        const buf = Buffer.alloc(jsonStringBound(s) + 8, 0xff);
        const end = putJsonString(buf, 4, s);
        assert.ok(end - 4 <= jsonStringBound(s), 'stays within its bound');
        assert.equal(buf.toString('utf8', 4, end), JSON.stringify(s));
        assert.equal(buf[end], 0xff, 'writes nothing past what it reports');
      }),
      { numRuns: 500 },
    );
  });

  it('an access line always parses back to the fields it was given', () => {
    const field = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
    fc.assert(
      fc.property(
        field,
        fc.option(field, { nil: undefined }),
        fc.nat({ max: 999 }),
        fc.nat(),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        field,
        field,
        (url, sub, status, bytes, ms, client, userAgent) => {
          const chunks: Buffer[] = [];
          const writer = new AccessLogWriter((c) => chunks.push(c), 0);
          put(writer, line({ path: url, sub, status, bytes, ms, upstreamMs: ms, client, userAgent }));
          const record = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          const q = url.indexOf('?');
          assert.equal(record['path'], q === -1 ? url : url.slice(0, q));
          assert.equal(record['query'], q === -1 || q === url.length - 1 ? undefined : url.slice(q + 1));
          assert.equal(record['client'], client);
          assert.equal(record['userAgent'], userAgent);
          assert.equal(record['sub'], sub);
          assert.equal(record['status'], status);
          assert.equal(record['bytes'], bytes);
          assert.equal(record['ms'], Math.round(ms * 1000) / 1000);
          assert.equal(record['upstreamMs'], Math.round(ms * 1000) / 1000);
        },
      ),
      { numRuns: 500 },
    );
  });
});
