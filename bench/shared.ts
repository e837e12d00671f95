/**
 * `npm run bench:shared`: what sharing state through Redis buys and costs (docs/operations.md
 * "Running many instances"). Two measurements, each against real processes and a real redis-server:
 *
 *  spread     three instances sharing one Redis against three on their own, each under the same
 *             load of random customers (a load generator per instance, at once): req/s summed, and
 *             upstream requests side by side (shared: about one per customer; alone: up to three).
 *  tier-hit   the cost of an answer from the Redis tier: one instance whose local cache holds one
 *             entry (so each request is a local miss answered from Redis), against the same
 *             instance with every customer in its local cache: server CPU µs per request, p50.
 *
 * `hot` with and without Redis is `npm run bench -- --scenario hot --servers hypergate,hypergate-redis`.
 * Prints a table and appends it to bench/RESULTS.md unless --no-record.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { parseArgs } from '../src/lib/cli-args.ts';
import { startRedis, type RedisServer } from '../test/helpers/redis.ts';
import { makeKeys, mint } from './lib/jwt.ts';
import { runLoad, wrkPath, type LoadResult, type LoadSpec, type Tool } from './lib/load.ts';
import { cpuMs, ROOT } from './lib/proc.ts';
import { appendResults, runInfo } from './lib/report.ts';
import { ACCEPT, CUSTOMER } from './lib/scenarios.ts';
import { Builds } from './lib/builds.ts';
import { hypergate, startUpstream, type RunningServer, type StartContext, type Upstream } from './lib/servers.ts';

const USAGE = `usage: npm run bench:shared -- [--duration S] [--customers N] [--connections N] [--tool wrk|autocannon] [--quick] [--no-record]

  --duration S      seconds of load per run (default 10; --quick 1)
  --customers N     distinct customers the load asks for (default 20000; --quick 500)
  --connections N   connections per instance (default 32)
  --quick           a smoke run: checks the script, never the speed (implies --no-record)`;

interface Options {
  readonly seconds: number;
  readonly customers: number;
  readonly connections: number;
  readonly tool: Tool;
  readonly record: boolean;
}

function options(argv: readonly string[]): Options | null {
  const args = parseArgs(argv, ['--duration', '--customers', '--connections', '--tool'], ['--quick', '--no-record', '--help']);
  if (args.has('--help')) return null;
  const quick = args.has('--quick');
  const num = (name: string, fallback: number): number => {
    const raw = args.get(name);
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number`);
    return n;
  };
  const tool = (args.get('--tool') ?? (wrkPath === null ? 'autocannon' : 'wrk')) as Tool;
  return {
    seconds: num('--duration', quick ? 1 : 10),
    customers: Math.round(num('--customers', quick ? 500 : 20_000)),
    connections: Math.round(num('--connections', 32)),
    tool,
    record: !quick && !args.has('--no-record'),
  };
}

const say = (line: string): void => void process.stderr.write(`${line}\n`);

function idsLoad(token: string, customers: number, seed: number): LoadSpec {
  return { path: `${CUSTOMER}1`, headers: ACCEPT, list: { kind: 'ids', count: customers, prefix: CUSTOMER, token, seed }, expect: 200 };
}

/** Asks for customers 1..n once each (32 at a time): they are then in the instance's cache and in Redis. */
async function warm(port: number, token: string, n: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32 });
  let next = 1;
  const lane = async (): Promise<void> => {
    while (next <= n) {
      const res = await pool.request({ method: 'GET', path: `${CUSTOMER}${next++}`, headers: { ...ACCEPT, authorization: `Bearer ${token}` } });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`warm-up answered ${res.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 32 }, lane));
  } finally {
    await pool.close();
  }
}

function checked(result: LoadResult, what: string): LoadResult {
  if (result.requests === 0 || result.errors > 0 || result.badStatus > 0)
    throw new Error(`${what}: ${result.requests} requests, ${result.errors} errors, ${result.badStatus} bad statuses: no figure`);
  return result;
}

async function spread(opts: Options, ctx: StartContext, upstream: Upstream, redis: RedisServer, token: string): Promise<string[]> {
  const rows: string[] = [];
  for (const shared of [false, true]) {
    await redis.command('FLUSHALL');
    const env: Record<string, string> = shared ? { HYPERGATE_REDIS_URL: redis.url } : {};
    const servers: RunningServer[] = [];
    try {
      for (let i = 0; i < 3; i++) servers.push(await hypergate(`hypergate-${shared ? 'shared' : 'alone'}-${i}`, undefined, env).start(ctx));
      const before = await upstream.count();
      const results = await Promise.all(
        servers.map((s, i) => runLoad(opts.tool, `http://127.0.0.1:${s.port}`, idsLoad(token, opts.customers, i + 1), opts.connections, opts.seconds)),
      );
      const upstreamRequests = (await upstream.count()) - before;
      const reqPerSec = results.reduce((sum, r, i) => sum + checked(r, `spread instance ${i}`).requests / (r.durationUs / 1e6), 0);
      const mode = shared ? '3 sharing Redis' : '3 alone';
      say(`  spread ${mode}: ${Math.round(reqPerSec)} req/s, ${upstreamRequests} upstream requests`);
      rows.push(`| spread | ${mode} | ${Math.round(reqPerSec)} | | | ${upstreamRequests} | ${(upstreamRequests / opts.customers).toFixed(2)} |`);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  return rows;
}

async function tierHit(opts: Options, ctx: StartContext, redis: RedisServer, token: string): Promise<string[]> {
  const rows: string[] = [];
  await redis.command('FLUSHALL');
  // A fills Redis with every customer; B answers from its local cache, or (one entry) from Redis.
  const filler = await hypergate('hypergate-filler', undefined, { HYPERGATE_REDIS_URL: redis.url }).start(ctx);
  try {
    await warm(filler.port, token, opts.customers);
  } finally {
    await filler.stop();
  }
  const perRequest: Record<string, number> = {};
  for (const [mode, env] of [
    ['local hit', {}],
    ['Redis-tier hit', { HYPERGATE_CACHE_MAX_ENTRIES: '1' }],
  ] as const) {
    const server = await hypergate(`hypergate-${mode}`, undefined, { HYPERGATE_REDIS_URL: redis.url, ...env }).start(ctx);
    try {
      await warm(server.port, token, opts.customers);
      const pid = server.child.pid as number;
      const cpuBefore = cpuMs(pid);
      const r = checked(await runLoad(opts.tool, `http://127.0.0.1:${server.port}`, idsLoad(token, opts.customers, 7), opts.connections, opts.seconds), mode);
      const cpuUs = ((cpuMs(pid) - cpuBefore) * 1000) / r.requests;
      perRequest[mode] = cpuUs;
      say(
        `  tier-hit ${mode}: ${Math.round(r.requests / (r.durationUs / 1e6))} req/s, ${cpuUs.toFixed(1)} µs CPU/request, p50 ${(r.p50Us / 1000).toFixed(2)} ms`,
      );
      rows.push(`| tier-hit | ${mode} | ${Math.round(r.requests / (r.durationUs / 1e6))} | ${cpuUs.toFixed(1)} | ${(r.p50Us / 1000).toFixed(2)} | | |`);
    } finally {
      await server.stop();
    }
  }
  const cost = (perRequest['Redis-tier hit'] ?? 0) - (perRequest['local hit'] ?? 0);
  rows.push(`| tier-hit | cost of a Redis-tier hit | | ${cost.toFixed(1)} µs more CPU per request | | | |`);
  return rows;
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  if (opts === null) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'hg-bench-shared-'));
  const upstream = await startUpstream(Math.max(100_000, opts.customers));
  const redis = await startRedis();
  try {
    const keys = makeKeys(dir);
    const token = mint(keys, 'bench-user');
    const capturePath = join(dir, 'capture.json');
    writeFileSync(capturePath, '{}');
    const ctx: StartContext = {
      upstreamUrl: upstream.url,
      publicKeyFile: keys.publicKeyFile,
      capturePath,
      dir,
      builds: new Builds(join(dir, 'builds'), say),
      accessLog: false,
    };
    say(`spread: ${opts.customers} random customers, ${opts.connections} connections per instance, ${opts.seconds} s`);
    const rows = [...(await spread(opts, ctx, upstream, redis, token)), ...(await tierHit(opts, ctx, redis, token))];
    const text = [
      '| measure | servers | req/s | CPU µs/req | p50 ms | upstream requests | upstream per customer |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n');
    process.stdout.write(`\n${text}\n`);
    if (opts.record)
      appendResults(
        resolve(ROOT, 'bench/RESULTS.md'),
        runInfo(opts.tool, {
          measure: 'shared state (bench/shared.ts)',
          customers: opts.customers,
          connections: opts.connections,
          duration: `${opts.seconds}s`,
        }),
        text,
      );
  } finally {
    await redis.close();
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:shared: FAILED: ${(err as Error).message}\n`);
  process.exit(1);
});
