/**
 * For the benchmark smoke tests (test/bench/): one build folder for all of them, the harness run
 * as a child, and the check that no run wrote the checkout's dist/.
 *
 * The build folder outlives a test run, in the system's temporary folder: a build of this working
 * tree (named by a hash of its files, bench/lib/builds.ts) is made by the first suite that needs
 * it and reused by the others and by the harness runs they start, so `npm test` builds once per
 * change of the sources. Builds older than a day are removed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Builds } from '../../bench/lib/builds.ts';
import { ROOT } from './process.ts';

export const BENCH_BUILDS = join(tmpdir(), 'hypergate-bench-test-builds');
const A_DAY_MS = 24 * 3600 * 1000;

mkdirSync(BENCH_BUILDS, { recursive: true });
for (const name of readdirSync(BENCH_BUILDS)) {
  const path = join(BENCH_BUILDS, name);
  try {
    if (Date.now() - statSync(path).mtimeMs > A_DAY_MS) rmSync(path, { recursive: true, force: true });
  } catch {
    // Removed meanwhile by a suite beside this one.
  }
}

/** The builds of the smoke tests, in BENCH_BUILDS. */
export const benchBuilds = new Builds(BENCH_BUILDS);

/**
 * Generous, for a build plus a run on a 2-core machine that other work keeps busy (a suite of
 * these takes about a minute on such a machine once the build is there).
 */
export const SLOW = { timeout: 600_000 };

export interface BenchRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node --import tsx <script> ...args` from the checkout, killed after 5 minutes. */
export function runBench(args: readonly string[], script = 'bench/run.ts'): Promise<BenchRun> {
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

/**
 * `npm run bench --quick` with loads of one second and no warm-up, its results in `resultsDir` and
 * its builds in the shared build folder: a smoke run of `args` (the scenarios, servers, modes).
 */
export function runQuickBench(resultsDir: string, args: readonly string[]): Promise<BenchRun> {
  return runBench(['--quick', ...args, '--duration', '1', '--warmup', '0', '--results-dir', resultsDir, '--build-dir', BENCH_BUILDS]);
}

/** The modification time of the checkout's dist/main.js, or null without one: equal before and after, nothing wrote it. */
export function distStamp(): number | null {
  const main = join(ROOT, 'dist/main.js');
  return existsSync(main) ? statSync(main).mtimeMs : null;
}
