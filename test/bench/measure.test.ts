/**
 * The harness's measurements besides the table: --profile, bench:memory, the refusal of a run
 * with unexpected answers, how each server is started (compiled, with npm start's flags) and the
 * access log written to a file. The loads last a second; every start uses the shared build folder
 * of the smoke tests (test/helpers/bench.ts), never the checkout's dist/.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startCommand } from '../../bench/lib/checkout.ts';
import { httpGet } from '../../bench/lib/http.ts';
import { makeKeys, mint } from '../../bench/lib/jwt.ts';
import { measure } from '../../bench/lib/measure.ts';
import type { Prepared } from '../../bench/lib/scenarios.ts';
import { SERVERS, startUpstream, type StartContext, type Upstream } from '../../bench/lib/servers.ts';
import { BENCH_BUILDS, benchBuilds, distStamp, runBench, runQuickBench, SLOW } from '../helpers/bench.ts';
import { ROOT } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hg-measure-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const distBefore = distStamp();
// The sample upstream in its own process, as the harness runs it.
let upstream: Upstream;
before(async () => {
  upstream = await startUpstream(1000);
}, SLOW);
after(() => upstream.stop());

function context(accessLog = false): StartContext {
  return {
    upstreamUrl: upstream.url,
    publicKeyFile: makeKeys(mkdtempSync(join(dir, 'keys-'))).publicKeyFile,
    capturePath: '',
    dir,
    builds: benchBuilds,
    accessLog,
  };
}

test('--profile --servers baseline,hypergate profiles both under load and sets them side by side in µs a request', SLOW, async () => {
  const results = join(dir, 'profile');
  const recordBefore = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8');
  const run = await runQuickBench(results, ['--profile', '--scenario', 'hot', '--servers', 'baseline,hypergate']);
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
  const run = await runBench(
    ['--quick', '--customers', '300', '--hal', '30', '--tokens', '300', '--settle', '0', '--results-dir', join(dir, 'memory'), '--build-dir', BENCH_BUILDS],
    'bench/memory.ts',
  );
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  assert.match(run.stdout, /\| before the first request \| \d+\.\d \| 60 \| smoke run: no verdict \| [\d.]+ \| 0 \| 0 \| 0 \|/);
  assert.match(
    run.stdout,
    /\| 300 customers read in JSON, 30 of them in HAL as well, 300 distinct tokens \| \d+\.\d \| 200 \| smoke run: no verdict \| [\d.]+ \| \d+ \| 0 \| 300 \|/,
  );
  // The high-water mark is at least the RSS read at rest after the fill.
  const peak = /the most RSS held at any moment .* was (\d+\.\d) MB/.exec(run.stdout);
  const full = /300 distinct tokens \| (\d+\.\d) \|/.exec(run.stdout);
  assert.ok(peak !== null && full !== null, run.stdout);
  assert.ok(Number(peak[1]) >= Number(full[1]), `peak ${peak[1]} MB below the RSS at rest ${full[1]} MB`);
  assert.equal(readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8'), recordBefore);
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

test(
  "hypergate in the harness is a build of this checkout's dist/main.js in the build folder, started with npm start's flags; the baseline runs compiled with the same flags",
  SLOW,
  async (t) => {
    const flags = startCommand(ROOT).nodeFlags;
    const server = await SERVERS['hypergate']!.start(context());
    t.after(() => server.stop());
    const argv = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const built = await benchBuilds.current();
    assert.ok(argv.includes(join(built.root, 'dist/main.js')) && built.root.startsWith(BENCH_BUILDS), argv.join(' '));
    for (const flag of flags) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
    assert.ok(!argv.includes('tsx'), argv.join(' '));
    assert.deepEqual(argv.slice(-2, -1), ['--config']);
    const base = await SERVERS['baseline']!.start({ ...context(), capturePath: writeCapture() });
    t.after(() => base.stop());
    const baseArgv = readFileSync(`/proc/${base.child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    assert.ok(
      baseArgv.some((a) => a.endsWith('dist-bench/servers/baseline.js')),
      baseArgv.join(' '),
    );
    for (const flag of flags) assert.ok(baseArgv.includes(flag), `${flag} in ${baseArgv.join(' ')}`);
    assert.ok(!baseArgv.includes('tsx'), baseArgv.join(' '));
  },
);

function writeCapture(): string {
  const file = join(dir, 'capture.json');
  writeFileSync(
    file,
    JSON.stringify({
      ok: { headers: ['content-type', 'application/json'], body: Buffer.from('{}').toString('base64') },
      notModified: { headers: [] },
      etag: '"x"',
    }),
  );
  return file;
}

test('--access-log file: the access log goes to a file while the server runs, removed when it stops', SLOW, async () => {
  const keys = makeKeys(mkdtempSync(join(dir, 'keys-')));
  const logDir = mkdtempSync(join(dir, 'log-'));
  const server = await SERVERS['hypergate']!.start({ ...context(true), publicKeyFile: keys.publicKeyFile, dir: logDir, accessLogTo: 'file' });
  let stopped = false;
  try {
    const answer = await httpGet(`http://127.0.0.1:${server.port}/api/customers/1`, { authorization: `Bearer ${mint(keys, 'logged')}` });
    assert.equal(answer.status, 200);
    const log = readdirSync(logDir).find((f) => f.startsWith('access-')) as string;
    // The line is written after the answer: wait for it, bounded.
    for (let i = 0; i < 100 && !readFileSync(join(logDir, log), 'utf8').includes('/api/customers/1'); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(readFileSync(join(logDir, log), 'utf8'), /\/api\/customers\/1/);
    await server.stop();
    stopped = true;
    assert.deepEqual(
      readdirSync(logDir).filter((f) => f.startsWith('access-')),
      [],
    );
  } finally {
    if (!stopped) await server.stop();
  }
});

test("no run wrote the checkout's dist/", () => {
  assert.equal(distStamp(), distBefore);
});
