/**
 * `npm run bench` works end to end (--quick smokes of hot, wide and herd, with the chart, and of
 * mixed, and of the feature scenarios) and refuses a bad option. Never a speed assertion: the machine is shared. The loads last
 * a second; every run builds into the shared build folder of the smoke tests
 * (test/helpers/bench.ts), never into the checkout's dist/.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseMarked, type LoadResult, type MixedCounts } from '../../bench/lib/load.ts';
import type { Summary } from '../../bench/lib/report.ts';
import { distStamp, runBench, runQuickBench, SLOW } from '../helpers/bench.ts';
import { ROOT } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hg-harness-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const distBefore = distStamp();

test(
  'npm run bench --quick runs hot, wide and herd end to end, writes sane JSON and a chart beside it, and leaves bench/RESULTS.md and bench/chart.svg alone',
  SLOW,
  async () => {
    const results = join(dir, 'results');
    const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
    const chartBefore = readFileSync(join(ROOT, 'bench/chart.svg'), 'utf8');
    const run = await runQuickBench(results, ['--scenario', 'hot,wide,herd', '--servers', 'baseline,hypergate']);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
    assert.match(run.stdout, /\| scenario \| server \| req\/s \| p50 ms \| p99 ms \| errors \+ non-2xx \|/);
    assert.equal(readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8'), recordBefore);
    assert.equal(readFileSync(join(ROOT, 'bench/chart.svg'), 'utf8'), chartBefore);

    const files = readdirSync(results).filter((f) => f.endsWith('.json'));
    assert.equal(files.length, 1);
    const json = JSON.parse(readFileSync(join(results, files[0] as string), 'utf8')) as {
      node: string;
      cpu: string;
      tool: string;
      summary: Summary[];
      records: { scenario: string; server: string; loopDelay?: { maxMs: number; p99Ms: number } }[];
    };
    assert.equal(json.node, process.version);
    assert.ok(json.cpu.length > 0 && json.tool.length > 0);
    assert.deepEqual(json.summary.map((r) => `${r.scenario}/${r.server}`).sort(), [
      'herd/baseline',
      'herd/hypergate',
      'hot/baseline',
      'hot/hypergate',
      'wide/baseline',
      'wide/hypergate',
    ]);
    assert.equal(json.records.length, 6);
    for (const row of json.summary) {
      assert.ok(Number.isFinite(row.reqPerSec) && row.reqPerSec > 0, `${row.scenario}/${row.server} req/s ${row.reqPerSec}`);
      assert.ok(row.p50Us >= 0 && row.p99Us >= row.p50Us, `${row.scenario}/${row.server} p50 ${row.p50Us} p99 ${row.p99Us}`);
      assert.equal(row.errors, 0);
      assert.equal(row.rounds, 1);
      assert.ok(row.ratio !== null && row.ratio > 0);
    }
    assert.equal(json.summary.find((r) => r.server === 'baseline' && r.scenario === 'hot')?.ratio, 1);
    assert.equal(json.summary.find((r) => r.server === 'hypergate' && r.scenario === 'herd')?.upstreamRequests, 1);
    assert.equal(json.summary.find((r) => r.server === 'hypergate' && r.scenario === 'hot')?.upstreamRequests, 0);
    // The event loop's delays, read off hypergate's own /metrics over each measured part; the baseline has none.
    for (const r of json.records) {
      if (r.server === 'baseline') assert.equal(r.loopDelay, undefined);
      else assert.ok(r.loopDelay !== undefined && r.loopDelay.maxMs >= r.loopDelay.p99Ms && r.loopDelay.p99Ms >= 0, JSON.stringify(r));
    }
    assert.match(
      run.stdout,
      /- hot: hypergate's event loop: longest delay [\d.]+ ms \(per round [\d.]+\), p99 [\d.]+ ms; request p99 [\d.]+ ms against the baseline's [\d.]+ ms/,
    );
    // wide: every one of its customers was cached by the warm-up.
    assert.equal(json.summary.find((r) => r.server === 'hypergate' && r.scenario === 'wide')?.upstreamRequests, 0);
    const chart = readFileSync(join(results, (files[0] as string).replace(/\.json$/, '.svg')), 'utf8');
    assert.match(chart, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*<\/svg>\n$/);
    for (const name of ['>hot<', '>wide<', '>baseline<', '>hypergate<', '>baseline = 1.0<']) assert.ok(chart.includes(name), name);
  },
);

test('the mixed scenario runs against hypergate only, with reads and PATCHes answered and no read older than an acknowledged write', SLOW, async () => {
  const results = join(dir, 'mixed');
  const run = await runQuickBench(results, ['--scenario', 'mixed', '--servers', 'baseline,hypergate']);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  const file = readdirSync(results).find((f) => f.endsWith('.json')) as string;
  const json = JSON.parse(readFileSync(join(results, file), 'utf8')) as { records: { server: string; mixed?: MixedCounts }[] };
  assert.deepEqual(
    json.records.map((r) => r.server),
    ['hypergate'],
    'nothing else here takes writes',
  );
  const counts = json.records[0]?.mixed;
  assert.ok(counts !== undefined && counts.reads > 0 && counts.writes > 0, JSON.stringify(counts));
  assert.equal(counts.staleReads, 0);
  assert.ok(counts.cacheHits > 0 && counts.cacheHits <= counts.reads);
  assert.match(
    run.stdout,
    new RegExp(`- mixed: hypergate \\d+ reads/s and \\d+ writes/s; [\\d.]+% of reads from cache; 0 of ${counts.reads} reads older than an acknowledged write`),
  );
});

test('the feature scenarios run on hypergate alone, download beside its upstream fetched directly, each set against hot', SLOW, async () => {
  const results = join(dir, 'features');
  const scenarios = 'hot,vary-claim,query,introspected,download';
  const run = await runQuickBench(results, ['--scenario', scenarios, '--servers', 'baseline,hypergate']);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  const file = readdirSync(results).find((f) => f.endsWith('.json')) as string;
  const json = JSON.parse(readFileSync(join(results, file), 'utf8')) as {
    records: { scenario: string; server: string; mbPerSec?: number; peakRssMb?: number }[];
  };
  assert.deepEqual(
    json.records.map((r) => `${r.scenario}/${r.server}`),
    ['hot/baseline', 'hot/hypergate', 'vary-claim/hypergate', 'query/hypergate', 'introspected/hypergate', 'download/hypergate', 'download/upstream-direct'],
  );
  for (const r of json.records.filter((r) => r.scenario === 'download')) assert.ok((r.mbPerSec ?? 0) > 0 && (r.peakRssMb ?? 0) > 0, JSON.stringify(r));
  for (const name of ['vary-claim', 'query', 'introspected']) assert.match(run.stdout, new RegExp(`- ${name}: hypergate \\d+ req/s = [\\d.]+× its hot`));
  assert.match(run.stdout, /- download: hypergate \d+ MiB\/s \([\d.]+× the upstream fetched directly\), peak RSS [\d.]+ MiB/);
});

test('the mixed driver counts a read older than a PATCH it saw answered (a server that forgets writes)', async (t) => {
  // Every read answers version 1 from "cache"; every PATCH answers version 2.
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const version = req.method === 'PATCH' ? 2 : 1;
      res.writeHead(200, { 'content-type': 'application/json', etag: `"v${version}.abcdefgh"`, 'cache-status': 'hypergate; hit; ttl=60', 'content-length': 2 });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const job = { port: (server.address() as AddressInfo).port, token: 'x', hotSet: 3, writeShare: 0.3, connections: 4, seconds: 0.5 };
  const run = await runBench([JSON.stringify(job)], 'bench/drivers/mixed.ts');
  assert.equal(run.code, 0, run.stderr);
  const result = parseMarked<LoadResult>(run.stdout, 'mixed driver');
  const counts = result.mixed as MixedCounts;
  assert.ok(counts.writes > 0 && counts.reads > 0);
  assert.ok(counts.staleReads > 0, 'reads of version 1 after a PATCH answered version 2 are stale');
  assert.ok(counts.staleReads < counts.reads, 'reads sent before any PATCH was answered are not');
  assert.equal(counts.cacheHits, counts.reads);
});

test('a bad option exits 1 with the option named, before starting anything', async () => {
  const run = await runBench(['--tool', 'ab']);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /--tool: expected wrk or autocannon/);
});

test("no run wrote the checkout's dist/", () => {
  assert.equal(distStamp(), distBefore);
});
