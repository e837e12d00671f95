/**
 * --compare: the baseline and both checkouts in interleaved rounds, with the verdict; a checkout
 * that refuses the benchmark's config, and a REF that is nothing, named as such. Every run uses
 * the shared build folder of the smoke tests (test/helpers/bench.ts), never the checkout's dist/.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Builds, type BuiltCheckout } from '../../bench/lib/builds.ts';
import { makeKeys } from '../../bench/lib/jwt.ts';
import { startCheckout } from '../../bench/lib/servers.ts';
import { benchBuilds, distStamp, runQuickBench, SLOW } from '../helpers/bench.ts';
import { ROOT } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hg-compare-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const distBefore = distStamp();

test('--compare runs the baseline, the other checkout and this one round by round, and says a single round cannot decide', SLOW, async () => {
  const results = join(dir, 'compare');
  // This working tree as the other checkout: the same build folder, so nothing is built again.
  const run = await runQuickBench(results, ['--compare', ROOT]);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  const other = `hypergate@${ROOT.split('/').at(-1)}`;
  const json = JSON.parse(readFileSync(join(results, readdirSync(results).find((f) => f.endsWith('.json')) as string), 'utf8')) as {
    records: { server: string; reqPerSec: number; cpuUsPerRequest: number }[];
  };
  assert.deepEqual(
    json.records.map((r) => r.server),
    ['baseline', other, 'hypergate'],
  );
  for (const r of json.records) assert.ok(r.reqPerSec > 0 && r.cpuUsPerRequest >= 0, JSON.stringify(r));
  assert.match(run.stdout, new RegExp(`\\| hot \\| req/s \\| \\d+ \\| \\d+ \\| [\\d.]+ \\| [\\d.]+%; [\\d.]+% \\| too noisy to decide: 1 round `));
  assert.match(run.stdout, /\| hot \| server CPU µs\/request \|/);
  assert.match(run.stdout, /\| hot \| req\/s × baseline, per round: median \(min–max\) \| [\d.]+ \| [\d.]+ \|/);
  assert.match(run.stdout, /A difference is decided when each side has at least 3 rounds/);
  assert.match(run.stdout, new RegExp(`${other}: the working tree of .*, started as \`node .*dist/main\\.js --config FILE\``));
});

test("a checkout that refuses the benchmark's config is named, with the config and what it said", SLOW, async () => {
  const root = mkdtempSync(join(dir, 'old-checkout-'));
  writeFileSync(join(root, 'main.js'), "process.stderr.write('config: unknown key admin\\n'); process.exit(1);\n");
  const built: BuiltCheckout = { name: 'hypergate@old', source: 'commit 0000', root, nodeFlags: [], entry: join(root, 'main.js') };
  await assert.rejects(
    startCheckout('hypergate@old', built, {
      upstreamUrl: 'http://127.0.0.1:9',
      publicKeyFile: makeKeys(dir).publicKeyFile,
      capturePath: '',
      dir,
      builds: benchBuilds,
      accessLog: false,
    }),
    (err: Error) => {
      assert.match(err.message, /hypergate@old \(commit 0000, built in .*\) did not start with the benchmark's config \{"server":\{"port":\d+\}/);
      assert.match(err.message, /config: unknown key admin/);
      return true;
    },
  );
});

test('--compare with something that is neither a folder nor a commit fails, naming it', async () => {
  await assert.rejects(
    new Builds(join(dir, 'nothing')).other('no-such-commit-anywhere'),
    /--compare no-such-commit-anywhere: neither a folder holding a checkout nor a commit of this repository/,
  );
});

test("no run wrote the checkout's dist/", () => {
  assert.equal(distStamp(), distBefore);
});
