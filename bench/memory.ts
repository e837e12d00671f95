/**
 * `npm run bench:memory`: hypergate's resident memory with its caches full. Starts the sample
 * upstream and hypergate (src/main.ts, default config plus any --cache-* override), sends one
 * request per customer, each with a token of its own, then checks through /metrics that the
 * tokens are all still cached (the oldest 1,000 are sent again: cache hits, no verification) and
 * reads VmRSS. Fails (exit 1) when RSS reaches --limit-mb or the run passes --timeout.
 *
 *   npm run bench:memory -- [--customers 100000] [--tokens 100000] [--limit-mb 200]
 *     [--cache-entries N] [--cache-bytes N] [--settle S] [--timeout S] [--no-record]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { parseArgs } from '../src/cli-args.ts';
import { makeKeys, mint, type BenchKeys } from './lib/jwt.ts';
import { freePort, ROOT, rssBytes } from './lib/proc.ts';
import { appendResults, runInfo, writeJson } from './lib/report.ts';
import { hypergate, startUpstream } from './lib/servers.ts';

const args = parseArgs(process.argv.slice(2), ['--customers', '--tokens', '--limit-mb', '--cache-entries', '--cache-bytes', '--timeout', '--settle', '--results-dir'], ['--no-record']);
const customers = Number(args.get('--customers') ?? 100_000);
const tokens = Number(args.get('--tokens') ?? 100_000);
const limitMb = Number(args.get('--limit-mb') ?? 200);
const timeoutS = Number(args.get('--timeout') ?? 300);
const settleS = Number(args.get('--settle') ?? 10);
const CONCURRENCY = 32;

/** Sends requests 1..count (32 at a time): request i reads customer ((i-1) % customers) + 1. */
async function send(pool: Pool, from: number, to: number, token: (i: number) => string): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next <= to) {
      const i = next++;
      const path = `/api/customers/${((i - 1) % customers) + 1}`;
      const res = await pool.request({ method: 'GET', path, headers: { accept: 'application/json', authorization: `Bearer ${token(i)}` } });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`GET ${path} answered ${res.statusCode}`);
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

async function run(keys: BenchKeys): Promise<{ text: string; ok: boolean; figures: Record<string, number> }> {
  const upstream = await startUpstream(customers);
  const adminPort = await freePort();
  const extra: Record<string, string> = { HYPERGATE_ADMIN_PORT: String(adminPort) };
  if (args.has('--cache-entries')) extra['HYPERGATE_CACHE_MAX_ENTRIES'] = String(args.get('--cache-entries'));
  if (args.has('--cache-bytes')) extra['HYPERGATE_CACHE_MAX_BYTES'] = String(args.get('--cache-bytes'));
  const server = await hypergate('hypergate', ROOT, extra).start({ upstreamUrl: upstream.url, publicKeyFile: keys.publicKeyFile, capturePath: '', accessLog: true });
  const pool = new Pool(`http://127.0.0.1:${server.port}`, { connections: CONCURRENCY });
  try {
    const startRss = rssBytes(server.child.pid as number);
    const shared = mint(keys, 'memory-shared');
    const minted: string[] = [];
    const tokenOf = (i: number): string => (i <= tokens ? (minted[i] ??= mint(keys, `memory-${i}`)) : shared);
    const started = Date.now();
    await send(pool, 1, Math.max(customers, tokens), tokenOf);
    const fillS = (Date.now() - started) / 1000;
    const before = await metrics(adminPort);
    // The oldest tokens again: still cached means token-cache hits and no new verification.
    const again = Math.min(1000, tokens);
    await send(pool, 1, again, tokenOf);
    // Idle for a while first: V8's memory reducer collects garbage once allocation stops, so RSS
    // then is what the caches hold rather than the fill's garbage.
    await new Promise((r) => setTimeout(r, settleS * 1000));
    const after = await metrics(adminPort);
    const rss = rssBytes(server.child.pid as number);
    const verified = after.get('hypergate_token_verifications_total{result="ok"}') ?? 0;
    const reverified = verified - (before.get('hypergate_token_verifications_total{result="ok"}') ?? 0);
    const entries = after.get('hypergate_cache_entries') ?? 0;
    const heapMb = (after.get('nodejs_heap_size_used_bytes') ?? Number.NaN) / 2 ** 20;
    const figures = { customers, tokens, rssMb: rss / 2 ** 20, startRssMb: startRss / 2 ** 20, heapUsedMb: heapMb, limitMb, cacheEntries: entries, cacheEvictions: after.get('hypergate_cache_evictions_total') ?? 0, tokensVerified: verified, oldestTokensReverified: reverified, fillSeconds: fillS };
    const ok = rss < limitMb * 2 ** 20;
    const text = [
      `| customers requested | tokens | response cache entries (2 formats each) | evictions | oldest ${again} tokens re-verified | RSS at start MB | RSS MB | JS heap used MB | limit MB | fill s |`,
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      `| ${customers} | ${tokens} | ${entries} (${Math.floor(entries / 2)} customers) | ${figures.cacheEvictions} | ${reverified} | ${figures.startRssMb.toFixed(1)} | ${figures.rssMb.toFixed(1)} | ${heapMb.toFixed(1)} | ${limitMb} | ${fillS.toFixed(1)} |`,
      '',
      `${ok ? 'PASS' : 'FAIL'}: RSS ${figures.rssMb.toFixed(1)} MB ${ok ? '<' : '>='} ${limitMb} MB${reverified === 0 ? '; every token still cached' : `; ${reverified} of the oldest tokens had been evicted from the token cache`}.`,
    ].join('\n');
    return { text, ok, figures };
  } finally {
    await pool.close();
    await server.stop();
    await upstream.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hg-memory-'));
const deadline = setTimeout(() => {
  process.stderr.write(`bench:memory: FAILED: not done within ${timeoutS} s\n`);
  process.exit(1);
}, timeoutS * 1000);
try {
  const { text, ok, figures } = await run(makeKeys(dir));
  clearTimeout(deadline);
  process.stdout.write(`${text}\n`);
  const info = runInfo(`undici, ${CONCURRENCY} connections`, { customers, tokens, ...(args.has('--cache-entries') ? { cacheMaxEntries: String(args.get('--cache-entries')) } : {}), ...(args.has('--cache-bytes') ? { cacheMaxBytes: String(args.get('--cache-bytes')) } : {}) });
  writeJson(resolve(String(args.get('--results-dir') ?? resolve(ROOT, 'bench/results'))), info, { memory: figures });
  if (!args.has('--no-record')) appendResults(resolve(ROOT, 'bench/RESULTS.md'), info, `Memory (npm run bench:memory):\n\n${text}\n`);
  process.exitCode = ok ? 0 : 1;
} catch (err) {
  process.stderr.write(`bench:memory: FAILED: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(deadline);
  rmSync(dir, { recursive: true, force: true });
}
