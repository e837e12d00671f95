/**
 * The benchmark harness works end to end (--quick smokes of hot, wide and herd, with the chart,
 * of --compare, and of the memory measurement) and refuses to print a figure for a run that saw
 * unexpected answers. Never a speed assertion: the machine is shared. Every run builds into one
 * temporary build folder (made once, before the tests), never into the checkout's dist/; the
 * loads last a second, and the time-outs leave room for a loaded 2-core machine.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { Builds, type BuiltCheckout } from '../../bench/lib/builds.ts';
import { startCommand } from '../../bench/lib/checkout.ts';
import { makeKeys, mint } from '../../bench/lib/jwt.ts';
import { parseMarked, type LoadResult, type MixedCounts } from '../../bench/lib/load.ts';
import { measure } from '../../bench/lib/measure.ts';
import type { Prepared } from '../../bench/lib/scenarios.ts';
import { SERVERS, startCheckout, startUpstream, type StartContext, type Upstream } from '../../bench/lib/servers.ts';
import type { Summary } from '../../bench/lib/report.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'hg-harness-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
/** Every run's build folder: this checkout is copied and built there once, then reused. */
const buildDir = join(dir, 'builds');
const builds = new Builds(buildDir);
/** Generous: a build and a run on a 2-core machine other work keeps busy. */
const SLOW = { timeout: 600_000 };
/** The checkout's dist/ before the tests (its main.js's mtime, or absent): no test may write it. */
const distBefore = existsSync(join(ROOT, 'dist/main.js')) ? statSync(join(ROOT, 'dist/main.js')).mtimeMs : null;
// For the direct measure() test; the sample upstream in its own process, as the harness runs it.
let upstream: Upstream;
before(async () => {
  upstream = await startUpstream(1000);
  await builds.current();
  await builds.compiledServers();
}, SLOW);
after(() => upstream.stop());

function context(accessLog = false): StartContext {
  return { upstreamUrl: upstream.url, publicKeyFile: makeKeys(mkdtempSync(join(dir, 'keys-'))).publicKeyFile, capturePath: '', dir, builds, accessLog };
}

function runBench(args: readonly string[], script = 'bench/run.ts'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

test('npm run bench --quick runs hot, wide and herd end to end, writes sane JSON and a chart beside it, and leaves bench/RESULTS.md and bench/chart.svg alone', SLOW, async () => {
  const results = join(dir, 'results');
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const chartBefore = readFileSync(join(ROOT, 'bench/chart.svg'), 'utf8');
  const run = await runBench(['--quick', '--scenario', 'hot,wide,herd', '--servers', 'baseline,hypergate', '--duration', '1', '--warmup', '0', '--results-dir', results, '--build-dir', buildDir]);
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

test('the mixed scenario runs against hypergate only, with reads and PATCHes answered and no read older than an acknowledged write', SLOW, async () => {
  const results = join(dir, 'mixed');
  const run = await runBench(['--quick', '--scenario', 'mixed', '--servers', 'baseline,hypergate', '--duration', '1', '--warmup', '0', '--results-dir', results, '--build-dir', buildDir]);
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

test('--profile --servers baseline,hypergate profiles both under load and sets them side by side in µs a request', SLOW, async () => {
  const results = join(dir, 'profile');
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const run = await runBench(['--profile', '--quick', '--scenario', 'hot', '--servers', 'baseline,hypergate', '--duration', '1', '--warmup', '0', '--results-dir', results, '--build-dir', buildDir]);
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

test('npm run bench:memory --quick measures the compiled gateway before its first request and full, and leaves bench/RESULTS.md alone', SLOW, async () => {
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const run = await runBench(['--quick', '--customers', '300', '--hal', '30', '--tokens', '300', '--settle', '0', '--results-dir', join(dir, 'memory'), '--build-dir', buildDir], 'bench/memory.ts');
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

test('a run whose answers are not the expected status throws instead of giving a figure', SLOW, async () => {
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
  const ctx = { ...context(), publicKeyFile: keys.publicKeyFile };
  await assert.rejects(
    measure('hot', SERVERS['hypergate']!, prepared, ctx, upstream, { tool: 'autocannon', connections: 4, seconds: 1, warmSeconds: 0 }, 1),
    /unexpected statuses .*: no figure/,
  );
});

test('hypergate in the harness is a build of this checkout\'s dist/main.js in the build folder, started with npm start\'s flags; the baseline runs compiled with the same flags', SLOW, async (t) => {
  const flags = startCommand(ROOT).nodeFlags;
  const server = await SERVERS['hypergate']!.start(context());
  t.after(() => server.stop());
  const argv = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0');
  const built = await builds.current();
  assert.ok(argv.includes(join(built.root, 'dist/main.js')) && built.root.startsWith(buildDir), argv.join(' '));
  for (const flag of flags) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
  assert.ok(!argv.includes('tsx'), argv.join(' '));
  assert.deepEqual(argv.slice(-2, -1), ['--config']);
  const base = await SERVERS['baseline']!.start({ ...context(), capturePath: writeCapture() });
  t.after(() => base.stop());
  const baseArgv = readFileSync(`/proc/${base.child.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(baseArgv.some((a) => a.endsWith('dist-bench/servers/baseline.js')), baseArgv.join(' '));
  for (const flag of flags) assert.ok(baseArgv.includes(flag), `${flag} in ${baseArgv.join(' ')}`);
  assert.ok(!baseArgv.includes('tsx'), baseArgv.join(' '));
});

function writeCapture(): string {
  const file = join(dir, 'capture.json');
  writeFileSync(file, JSON.stringify({ ok: { headers: ['content-type', 'application/json'], body: Buffer.from('{}').toString('base64') }, notModified: { headers: [] }, etag: '"x"' }));
  return file;
}

test('--compare runs the baseline, the other checkout and this one round by round, and says a single round cannot decide', SLOW, async () => {
  const results = join(dir, 'compare');
  // This working tree as the other checkout: the same build folder, so nothing is built again.
  const run = await runBench(['--quick', '--compare', ROOT, '--duration', '1', '--warmup', '0', '--results-dir', results, '--build-dir', buildDir]);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  const other = `hypergate@${ROOT.split('/').at(-1)}`;
  const json = JSON.parse(readFileSync(join(results, readdirSync(results).find((f) => f.endsWith('.json')) as string), 'utf8')) as { records: { server: string; reqPerSec: number; cpuUsPerRequest: number }[] };
  assert.deepEqual(json.records.map((r) => r.server), ['baseline', other, 'hypergate']);
  for (const r of json.records) assert.ok(r.reqPerSec > 0 && r.cpuUsPerRequest >= 0, JSON.stringify(r));
  assert.match(run.stdout, new RegExp(`\\| hot \\| req/s \\| \\d+ \\| \\d+ \\| [\\d.]+ \\| [\\d.]+%; [\\d.]+% \\| too noisy to decide: 1 round `));
  assert.match(run.stdout, /\| hot \| server CPU µs\/request \|/);
  assert.match(run.stdout, /\| hot \| req\/s × baseline, per round: median \(min–max\) \| [\d.]+ \| [\d.]+ \|/);
  assert.match(run.stdout, /A difference is decided when each side has at least 3 rounds/);
  assert.match(run.stdout, new RegExp(`${other}: the working tree of .*, started as \`node .*dist/main\\.js --config FILE\``));
});

test('a checkout that refuses the benchmark\'s config is named, with the config and what it said', SLOW, async () => {
  const root = mkdtempSync(join(dir, 'old-checkout-'));
  writeFileSync(join(root, 'main.js'), "process.stderr.write('config: unknown key admin\\n'); process.exit(1);\n");
  const built: BuiltCheckout = { name: 'hypergate@old', source: 'commit 0000', root, nodeFlags: [], entry: join(root, 'main.js') };
  await assert.rejects(startCheckout('hypergate@old', built, context()), (err: Error) => {
    assert.match(err.message, /hypergate@old \(commit 0000, built in .*\) did not start with the benchmark's config \{"server":\{"port":\d+\}/);
    assert.match(err.message, /config: unknown key admin/);
    return true;
  });
});

test('--compare with something that is neither a folder nor a commit fails, naming it', async () => {
  await assert.rejects(new Builds(join(dir, 'nothing')).other('no-such-commit-anywhere'), /--compare no-such-commit-anywhere: neither a folder holding a checkout nor a commit of this repository/);
});

test('the benchmark smokes left the checkout\'s dist/ as it was', () => {
  const now = existsSync(join(ROOT, 'dist/main.js')) ? statSync(join(ROOT, 'dist/main.js')).mtimeMs : null;
  assert.equal(now, distBefore);
});
