/**
 * `npm run bench:memory`: hypergate's resident memory, started as production starts it (the
 * compiled dist/main.js, as `npm start` runs it; default config plus any --cache-* override), at
 * the two points the footprint target names (issue 13, item 2):
 *   1. before the first request (after --settle seconds idle);
 *   2. with --customers customers read in JSON, --hal of them in HAL as well, and --tokens distinct
 *      tokens verified (request i reads customer i with token i; the HAL reads reuse tokens
 *      1..--hal, already verified), after --settle seconds idle.
 * It checks through /metrics that the tokens are all still cached (the oldest 1,000 are sent
 * again: cache hits, no verification), prints the table, and fails (exit 1) when an RSS reaches
 * its limit or the run passes --timeout. `--record` appends the table to bench/RESULTS.md;
 * `--quick` is a smoke run with small counts and no verdict, never recorded.
 *
 *   npm run bench:memory -- [--customers 100000] [--hal 10000] [--tokens 100000] [--limit-mb 200]
 *     [--start-limit-mb 60] [--cache-entries N] [--cache-bytes N] [--settle S] [--timeout S]
 *     [--results-dir DIR] [--build-dir DIR] [--record] [--quick]
 *
 * --build-dir: where the gateway is copied and built (bench/lib/builds.ts; default a temporary
 * folder removed at the end, so the checkout's dist/ is never written).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { parseArgs } from '../src/lib/cli-args.ts';
import { makeKeys, mint, type BenchKeys } from './lib/jwt.ts';
import { freePort, peakRssBytes, ROOT, rssBytes } from './lib/proc.ts';
import { appendResults, runInfo, writeJson } from './lib/report.ts';
import { Builds } from './lib/builds.ts';
import { hypergate, startUpstream } from './lib/servers.ts';

const args = parseArgs(
  process.argv.slice(2),
  [
    '--customers',
    '--hal',
    '--tokens',
    '--limit-mb',
    '--start-limit-mb',
    '--cache-entries',
    '--cache-bytes',
    '--timeout',
    '--settle',
    '--results-dir',
    '--build-dir',
  ],
  ['--record', '--quick'],
);
const quick = args.has('--quick');
const count = (name: string, full: number, smoke: number): number => {
  const n = Number(args.get(name) ?? (quick ? smoke : full));
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected a whole number, got ${String(args.get(name))}`);
  return n;
};
const customers = Math.max(1, count('--customers', 100_000, 2000));
const hal = Math.min(customers, count('--hal', 10_000, 200));
const tokens = count('--tokens', 100_000, 2000);
const limitMb = count('--limit-mb', 200, 200);
const startLimitMb = count('--start-limit-mb', 60, 60);
const timeoutS = count('--timeout', 300, 120);
const settleS = count('--settle', 10, 1);
const CONCURRENCY = 32;
const JSON_TYPE = 'application/json';
const HAL_TYPE = 'application/hal+json';

/** Sends requests from..to (32 at a time): request i reads customer ((i-1) % customers) + 1 in `type`. */
async function send(pool: Pool, from: number, to: number, type: string, token: (i: number) => string): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next <= to) {
      const i = next++;
      const path = `/api/customers/${((i - 1) % customers) + 1}`;
      const res = await pool.request({ method: 'GET', path, headers: { accept: type, authorization: `Bearer ${token(i)}` } });
      await res.body.dump();
      if (res.statusCode !== 200 || res.headers['content-type'] !== type)
        throw new Error(`GET ${path} (${type}) answered ${res.statusCode} ${String(res.headers['content-type'])}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function metrics(adminPort: number): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^((?:hypergate|nodejs)_[a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$/.exec(line);
    if (m?.[1] !== undefined) out.set(m[1], Number(m[2]));
  }
  return out;
}

/** Idle for a while first: V8's memory reducer collects garbage once allocation stops, so RSS then is what is held, not what was passing through. */
function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, settleS * 1000));
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const VERIFIED = 'hypergate_token_verifications_total{result="ok"}';

async function run(keys: BenchKeys, dir: string, builds: Builds): Promise<{ text: string; ok: boolean; figures: Record<string, number> }> {
  const upstream = await startUpstream(customers);
  const adminPort = await freePort();
  const extra: Record<string, string> = { HYPERGATE_ADMIN_PORT: String(adminPort) };
  if (args.has('--cache-entries')) extra['HYPERGATE_CACHE_MAX_ENTRIES'] = String(args.get('--cache-entries'));
  if (args.has('--cache-bytes')) extra['HYPERGATE_CACHE_MAX_BYTES'] = String(args.get('--cache-bytes'));
  const server = await hypergate('hypergate', undefined, extra).start({
    upstreamUrl: upstream.url,
    publicKeyFile: keys.publicKeyFile,
    capturePath: '',
    dir,
    builds,
    accessLog: true,
  });
  const pid = server.child.pid as number;
  const pool = new Pool(`http://127.0.0.1:${server.port}`, { connections: CONCURRENCY });
  try {
    await settle();
    const startRss = rssBytes(pid);
    // Read after the RSS: the admin listener's answer is not part of "before the first request".
    const atStart = await metrics(adminPort);
    const shared = mint(keys, 'memory-shared');
    const minted: string[] = [];
    const tokenOf = (i: number): string => (i <= tokens ? (minted[i] ??= mint(keys, `memory-${i}`)) : shared);
    const started = Date.now();
    await send(pool, 1, Math.max(customers, tokens), JSON_TYPE, tokenOf);
    await send(pool, 1, hal, HAL_TYPE, tokenOf);
    const fillS = (Date.now() - started) / 1000;
    const before = await metrics(adminPort);
    // The oldest tokens again: still cached means token-cache hits and no new verification.
    const again = Math.min(1000, tokens);
    await send(pool, 1, again, JSON_TYPE, tokenOf);
    await settle();
    const rss = rssBytes(pid);
    const peakRss = peakRssBytes(pid);
    const after = await metrics(adminPort);
    const reverified = (after.get(VERIFIED) ?? 0) - (before.get(VERIFIED) ?? 0);
    const figures = {
      customers,
      halCustomers: hal,
      tokens,
      startRssMb: startRss / 2 ** 20,
      startLimitMb,
      rssMb: rss / 2 ** 20,
      peakRssMb: peakRss / 2 ** 20,
      limitMb,
      startHeapUsedMb: (atStart.get('nodejs_heap_size_used_bytes') ?? Number.NaN) / 2 ** 20,
      heapUsedMb: (after.get('nodejs_heap_size_used_bytes') ?? Number.NaN) / 2 ** 20,
      cacheEntries: after.get('hypergate_cache_entries') ?? 0,
      cacheEvictions: after.get('hypergate_cache_evictions_total') ?? 0,
      tokensVerified: before.get(VERIFIED) ?? 0,
      oldestTokensReverified: reverified,
      fillSeconds: fillS,
    };
    const startOk = startRss < startLimitMb * 2 ** 20;
    const fullOk = rss < limitMb * 2 ** 20;
    const verdict = (ok: boolean): string => (quick ? 'smoke run: no verdict' : ok ? 'PASS' : 'FAIL');
    const text = [
      '| when | RSS MB | limit MB | verdict | JS heap used MB | response cache entries | cache evictions | tokens verified |',
      '| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
      `| before the first request | ${mb(startRss)} | ${startLimitMb} | ${verdict(startOk)} | ${mb(atStart.get('nodejs_heap_size_used_bytes') ?? Number.NaN)} | ${atStart.get('hypergate_cache_entries') ?? 0} | ${atStart.get('hypergate_cache_evictions_total') ?? 0} | ${atStart.get(VERIFIED) ?? 0} |`,
      `| ${customers} customers read in JSON, ${hal} of them in HAL as well, ${tokens} distinct tokens | ${mb(rss)} | ${limitMb} | ${verdict(fullOk)} | ${mb(after.get('nodejs_heap_size_used_bytes') ?? Number.NaN)} | ${figures.cacheEntries} | ${figures.cacheEvictions} | ${figures.tokensVerified} |`,
      '',
      `RSS after ${settleS} s idle each time; the most RSS held at any moment (the kernel's high-water mark, during the fill) was ${mb(peakRss)} MB: what a container's memory limit must allow. Filled in ${fillS.toFixed(1)} s by ${CONCURRENCY} connections. ${reverified === 0 ? `The oldest ${again} tokens sent again were all still cached.` : `${reverified} of the oldest ${again} tokens sent again had been evicted from the token cache.`}`,
    ].join('\n');
    return { text, ok: quick || (startOk && fullOk), figures };
  } finally {
    await pool.close();
    await server.stop();
    await upstream.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hg-memory-'));
let deadline: NodeJS.Timeout | undefined;
try {
  const builds = new Builds(
    args.has('--build-dir') ? resolve(String(args.get('--build-dir'))) : join(dir, 'builds'),
    (line) => void process.stderr.write(`${line}\n`),
  );
  // Built before the clock starts: --timeout bounds the measurement, not the build.
  await builds.current();
  deadline = setTimeout(() => {
    process.stderr.write(`bench:memory: FAILED: not done within ${timeoutS} s\n`);
    process.exit(1);
  }, timeoutS * 1000);
  const { text, ok, figures } = await run(makeKeys(dir), dir, builds);
  clearTimeout(deadline);
  process.stdout.write(`${text}\n`);
  const overrides = {
    ...(args.has('--cache-entries') ? { cacheMaxEntries: String(args.get('--cache-entries')) } : {}),
    ...(args.has('--cache-bytes') ? { cacheMaxBytes: String(args.get('--cache-bytes')) } : {}),
  };
  const info = runInfo(`undici, ${CONCURRENCY} connections`, {
    customers,
    halCustomers: hal,
    tokens,
    settle: `${settleS}s`,
    ...overrides,
    ...(quick ? { quick: true } : {}),
  });
  const json = writeJson(resolve(String(args.get('--results-dir') ?? resolve(ROOT, 'bench/results'))), info, { memory: figures });
  process.stderr.write(`raw results: ${json}\n`);
  // A smoke run's figures mean nothing: never recorded.
  if (args.has('--record') && !quick) {
    appendResults(resolve(ROOT, 'bench/RESULTS.md'), info, `Memory (npm run bench:memory):\n\n${text}\n`);
    process.stderr.write('appended to bench/RESULTS.md\n');
  }
  process.exitCode = ok ? 0 : 1;
} catch (err) {
  process.stderr.write(`bench:memory: FAILED: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(deadline);
  rmSync(dir, { recursive: true, force: true });
}
