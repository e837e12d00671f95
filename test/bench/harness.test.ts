/**
 * The benchmark harness works end to end (--quick smokes of hot, wide and herd, with the chart,
 * and of the memory measurement) and refuses to print a figure for a run that saw unexpected
 * answers. Never a speed assertion: the machine is shared.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { makeKeys, mint } from '../../bench/lib/jwt.ts';
import { parseMarked, type LoadResult, type MixedCounts } from '../../bench/lib/load.ts';
import { measure } from '../../bench/lib/measure.ts';
import type { Prepared } from '../../bench/lib/scenarios.ts';
import { SERVERS, startUpstream, type Upstream } from '../../bench/lib/servers.ts';
import type { Summary } from '../../bench/lib/report.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'hg-harness-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// For the direct measure() test; the sample upstream in its own process, as the harness runs it.
let upstream: Upstream;
before(async () => {
  upstream = await startUpstream(1000);
});
after(() => upstream.stop());


function runBench(args: readonly string[], script = 'bench/run.ts'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

test('npm run bench --quick runs hot, wide and herd end to end, writes sane JSON and a chart beside it, and leaves bench/RESULTS.md and bench/chart.svg alone', async () => {
  const results = join(dir, 'results');
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const chartBefore = readFileSync(join(ROOT, 'bench/chart.svg'), 'utf8');
  const run = await runBench(['--quick', '--scenario', 'hot,wide,herd', '--servers', 'baseline,hypergate', '--duration', '1', '--warmup', '0', '--results-dir', results]);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  assert.match(run.stdout, /\| scenario \| server \| req\/s \| p50 ms \| p99 ms \| errors \+ non-2xx \|/);
  assert.equal(readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8'), recordBefore);
  assert.equal(readFileSync(join(ROOT, 'bench/chart.svg'), 'utf8'), chartBefore);

  const files = readdirSync(results).filter((f) => f.endsWith('.json'));
  assert.equal(files.length, 1);
  const json = JSON.parse(readFileSync(join(results, files[0] as string), 'utf8')) as { node: string; cpu: string; tool: string; summary: Summary[]; records: unknown[] };
  assert.equal(json.node, process.version);
  assert.ok(json.cpu.length > 0 && json.tool.length > 0);
  assert.deepEqual(json.summary.map((r) => `${r.scenario}/${r.server}`).sort(), ['herd/baseline', 'herd/hypergate', 'hot/baseline', 'hot/hypergate', 'wide/baseline', 'wide/hypergate']);
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
  // wide: every one of its customers was cached by the warm-up.
  assert.equal(json.summary.find((r) => r.server === 'hypergate' && r.scenario === 'wide')?.upstreamRequests, 0);
  const chart = readFileSync(join(results, (files[0] as string).replace(/\.json$/, '.svg')), 'utf8');
  assert.match(chart, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*<\/svg>\n$/);
  for (const name of ['>hot<', '>wide<', '>baseline<', '>hypergate<', '>baseline = 1.0<']) assert.ok(chart.includes(name), name);
});

test('the mixed scenario runs against hypergate only, with reads and PATCHes answered and no read older than an acknowledged write', async () => {
  const results = join(dir, 'mixed');
  const run = await runBench(['--quick', '--scenario', 'mixed', '--servers', 'baseline,hypergate', '--duration', '1', '--warmup', '0', '--results-dir', results]);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  const file = readdirSync(results).find((f) => f.endsWith('.json')) as string;
  const json = JSON.parse(readFileSync(join(results, file), 'utf8')) as { records: { server: string; mixed?: MixedCounts }[] };
  assert.deepEqual(json.records.map((r) => r.server), ['hypergate'], 'nothing else here takes writes');
  const counts = json.records[0]?.mixed;
  assert.ok(counts !== undefined && counts.reads > 0 && counts.writes > 0, JSON.stringify(counts));
  assert.equal(counts.staleReads, 0);
  assert.ok(counts.cacheHits > 0 && counts.cacheHits <= counts.reads);
  assert.match(run.stdout, new RegExp(`- mixed: hypergate \\d+ reads/s and \\d+ writes/s; [\\d.]+% of reads from cache; 0 of ${counts.reads} reads older than an acknowledged write`));
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

test('--profile --servers baseline,hypergate profiles both under load and sets them side by side in µs a request', async () => {
  const results = join(dir, 'profile');
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const run = await runBench(['--profile', '--quick', '--scenario', 'hot', '--servers', 'baseline,hypergate', '--duration', '1', '--warmup', '0', '--results-dir', results]);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  for (const name of ['baseline', 'hypergate']) {
    const head = new RegExp(`CPU profile of ${name} under hot .*: (\\d+) requests, busy (\\d+) ms`).exec(run.stdout);
    assert.ok(head !== null && Number(head[1]) > 0 && Number(head[2]) > 0, `${name}: ${run.stdout}`);
  }
  const busy = /\| busy, all frames \| ([\d.]+) \| ([\d.]+) \|/.exec(run.stdout);
  assert.ok(busy !== null && Number(busy[1]) > 0 && Number(busy[2]) > 0, run.stdout);
  // hypergate's own frames (its sources, named through the build's source maps) are among those that differ.
  assert.match(run.stdout, /\| `[^`]+ src\/[\w/-]+\.ts:\d+` \| [\d.]+ \| [\d.]+ \|/);
  assert.equal(readdirSync(results).filter((f) => f.endsWith('.cpuprofile')).length, 2);
  assert.equal(readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8'), recordBefore);
});

test('npm run bench:memory --quick measures the compiled gateway before its first request and full, and leaves bench/RESULTS.md alone', async () => {
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const run = await runBench(['--quick', '--customers', '300', '--hal', '30', '--tokens', '300', '--settle', '0', '--results-dir', join(dir, 'memory')], 'bench/memory.ts');
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  assert.match(run.stdout, /\| before the first request \| \d+\.\d \| 60 \| smoke run: no verdict \| [\d.]+ \| 0 \| 0 \| 0 \|/);
  assert.match(run.stdout, /\| 300 customers read in JSON, 30 of them in HAL as well, 300 distinct tokens \| \d+\.\d \| 200 \| smoke run: no verdict \| [\d.]+ \| \d+ \| 0 \| 300 \|/);
  // The high-water mark is at least the RSS read at rest after the fill.
  const peak = /the most RSS held at any moment .* was (\d+\.\d) MB/.exec(run.stdout);
  const full = /300 distinct tokens \| (\d+\.\d) \|/.exec(run.stdout);
  assert.ok(peak !== null && full !== null, run.stdout);
  assert.ok(Number(peak[1]) >= Number(full[1]), `peak ${peak[1]} MB below the RSS at rest ${full[1]} MB`);
  assert.equal(readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8'), recordBefore);
});

test('a bad option exits 1 with the option named, before starting anything', async () => {
  const run = await runBench(['--tool', 'ab']);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /--tool: expected wrk or autocannon/);
});

test('a run whose answers are not the expected status throws instead of giving a figure', async () => {
  const keys = makeKeys(dir);
  const stranger = makeKeys(mkdtempSync(join(dir, 'other-')));
  // Signed by a key hypergate does not know: every answer is a 401.
  const prepared: Prepared = {
    load: { path: '/api/customers/1', headers: { authorization: `Bearer ${mint(stranger, 'mallory')}` }, expect: 200 },
    samples: [],
    warm: { load: { path: '/api/customers/1', headers: {}, expect: 200 } },
    herd: false,
    noRepeat: false,
  };
  const ctx = { upstreamUrl: upstream.url, publicKeyFile: keys.publicKeyFile, capturePath: '', accessLog: false };
  await assert.rejects(
    measure('hot', SERVERS['hypergate']!, prepared, ctx, upstream, { tool: 'autocannon', connections: 4, seconds: 1, warmSeconds: 0 }, 1),
    /unexpected statuses .*: no figure/,
  );
});

test('hypergate in the harness is this checkout\'s built dist/main.js, started with npm start\'s flags', async (t) => {
  const server = await SERVERS['hypergate']!.start({ upstreamUrl: upstream.url, publicKeyFile: makeKeys(dir).publicKeyFile, capturePath: '', accessLog: false });
  t.after(() => server.stop());
  const argv = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(argv.includes(join(ROOT, 'dist/main.js')), argv.join(' '));
  assert.ok(argv.includes('--enable-source-maps'), argv.join(' '));
  assert.ok(!argv.includes('tsx'), argv.join(' '));
});

