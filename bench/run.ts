/**
 * `npm run bench`: hypergate against its ceiling (bare node:http writing the same bytes) and a
 * peer (Fastify + @fastify/jwt), scenario by scenario, each server its own process on core 0,
 * the load generator on core 1. Prints a table, writes raw JSON to bench/results/ and appends the
 * table to bench/RESULTS.md, with an SVG chart of it (bench/chart.svg when recorded). See
 * `npm run bench -- --help` and bench/README.md.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { Builds, checkoutName, type BuiltCheckout } from './lib/builds.ts';
import { captureHit } from './lib/capture.ts';
import { comparisonTable } from './lib/compare.ts';
import { renderChart } from './lib/chart.ts';
import { chartFromJson } from './lib/chart-source.ts';
import { makeKeys, mint } from './lib/jwt.ts';
import { parseMarked } from './lib/load.ts';
import { measure, type RunRecord } from './lib/measure.ts';
import { USAGE, parseOptions } from './lib/options.ts';
import { profiledScenario, profileHot } from './lib/profile.ts';
import { collect, hasTaskset, nodeArgv, ROOT, SERVER_CORE, spawnPinned } from './lib/proc.ts';
import { appendResults, featureNotes, mixedNotes, runInfo, summarise, table, tailNotes, writeJson } from './lib/report.ts';
import { fetchedDirectly, FEATURE_SCENARIOS } from './lib/feature-scenarios.ts';
import { SCENARIOS } from './lib/scenario-list.ts';
import { ACCEPT, HOT_PATH, type PrepareContext } from './lib/scenarios.ts';
import { baseline, hypergate, SERVERS, startCounted, startUpstream, upstreamDirect, type ServerSpec, type StartContext, type Upstream } from './lib/servers.ts';
import { startSpanSink, type SpanSink } from './lib/span-sink.ts';
import { startRedis, type RedisServer } from '../test/helpers/redis.ts';

const say = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

async function joseRate(listFile: string, pem: string): Promise<number> {
  const child = spawnPinned(SERVER_CORE, nodeArgv('bench/micro/jose-rate.ts', [listFile, pem, '2000']), { stdio: ['ignore', 'pipe', 'pipe'] });
  return parseMarked<{ opsPerSec: number }>(await collect(child, 'jose ES256 micro-benchmark', 60_000), 'jose micro-benchmark').opsPerSec;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  if (opts === null) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // Each hypergate is built in a folder of its own (builds.ts); the peer's packages must be there.
  // The servers this run starts: --profile runs only those it profiles.
  const measured = opts.profile ? opts.profileServers : opts.servers;
  if (measured.some((n) => n.startsWith('fastify')) && !existsSync(resolve(ROOT, 'node_modules/fastify')) && opts.compare === null) {
    throw new Error('the Fastify peer needs its devDependencies: run npm ci (or pass --servers baseline,hypergate)');
  }
  if (opts.tool === 'autocannon')
    say(
      'WARNING: using autocannon. It saturates its own core near 30k-35k req/s, so ceiling figures (baseline, hot) measure autocannon, not the server: install wrk (apt-get install wrk) for those.',
    );
  if (!hasTaskset) say('WARNING: taskset not found: servers and load generator are not pinned to separate cores; figures are noisier.');
  const dir = mkdtempSync(join(tmpdir(), 'hg-bench-'));
  let upstream: Upstream | null = null;
  // The feature scenarios' upstream and introspection endpoint, started only when one of them runs.
  const helpers: Upstream[] = [];
  // Only hypergate-redis needs it: a real redis-server on a free loopback port, no persistence.
  let redis: RedisServer | null = null;
  // With --tracing: where hypergate's spans go (read and dropped, as a collector's receiver would take them).
  let collector: SpanSink | null = null;
  try {
    const builds = new Builds(opts.buildDir ?? join(dir, 'builds'), say);
    // Built before anything runs: a checkout that cannot be built fails the run before any figure.
    const built = [await builds.current(), ...(await sequence((opts.compare ?? []).map((spec) => () => builds.other(spec))))];
    for (const b of built) say(`${b.name}: ${b.source}, started as ${startLine(b)}`);
    upstream = await startUpstream(100_000);
    if (measured.includes('hypergate-redis') && opts.compare === null) redis = await startRedis();
    const keys = makeKeys(dir);
    const hotToken = mint(keys, 'bench-user');
    const capturePath = join(dir, 'capture.json');
    const shared = redis;
    if (opts.tracing !== null) collector = await startSpanSink();
    const start: StartContext = {
      upstreamUrl: upstream.url,
      publicKeyFile: keys.publicKeyFile,
      capturePath,
      dir,
      builds,
      accessLog: opts.accessLog,
      accessLogTo: opts.accessLogTo,
      workers: opts.workers,
      ...(collector === null || opts.tracing === null ? {} : { tracing: { ratio: opts.tracing, url: collector.url } }),
      ...(shared === null ? {} : { redis: { url: shared.url, flush: async () => void (await shared.command('FLUSHALL')) } }),
    };
    // The baseline's bytes, and the ETag for `conditional`, from a real hypergate cache hit.
    const first = await hypergate().start(start);
    const capture = await captureHit(`http://127.0.0.1:${first.port}${HOT_PATH}`, { ...ACCEPT, authorization: `Bearer ${hotToken}` }).finally(() =>
      first.stop(),
    );
    writeFileSync(capturePath, JSON.stringify(capture));
    let prep: PrepareContext = { keys, dir, seconds: opts.seconds, warmSeconds: opts.warmSeconds, hotToken, etag: capture.etag };
    if (FEATURE_SCENARIOS.some((s) => opts.scenarios.includes(s.name))) {
      const features = await startCounted('bench/servers/features.ts', [], 'feature upstream');
      helpers.push(features);
      const introspection = await startCounted('bench/servers/introspection.ts', [], 'introspection endpoint');
      helpers.push(introspection);
      prep = { ...prep, features: { ...features, what: 'feature upstream' }, introspection: { ...introspection, what: 'introspection endpoint' } };
    }
    if (opts.profile) {
      const summary = await profileHot(opts, start, prep, dir);
      process.stdout.write(`${summary}\n`);
      if (opts.record)
        appendResults(
          resolve(ROOT, 'bench/RESULTS.md'),
          runInfo(opts.tool, { profile: profiledScenario(opts), connections: opts.connections, duration: `${opts.seconds}s` }),
          summary,
        );
      return;
    }
    // --compare: the baseline, then the other checkouts, then this one, round after round.
    const servers: ServerSpec[] =
      opts.compare === null
        ? opts.servers.map((n) => SERVERS[n] as ServerSpec)
        : [baseline, ...opts.compare.map((spec) => hypergate(checkoutName(spec), spec)), hypergate()];
    const reference = 'baseline';
    const records: RunRecord[] = [];
    const extras: Record<string, number> = {};
    for (const scenario of SCENARIOS.filter((s) => opts.scenarios.includes(s.name))) {
      say(`scenario ${scenario.name}: ${scenario.about}`);
      const prepared = scenario.prepare(prep);
      // The servers that do what it needs: hypergate alone, or beside the upstream fetched directly (download).
      const runOn =
        prepared.mixed !== undefined || prepared.hypergateConfig !== undefined
          ? [...servers.filter((s) => s.name.startsWith('hypergate')), ...(prepared.download === undefined ? [] : [upstreamDirect])]
          : servers;
      for (let round = 1; round <= opts.rounds; round++) {
        for (const spec of runOn) {
          const r = await measure(scenario.name, spec, spec === upstreamDirect ? fetchedDirectly(prepared) : prepared, start, upstream, opts, round);
          records.push(r);
          say(
            `  round ${round} ${spec.name}: ${Math.round(r.reqPerSec)} req/s, p99 ${(r.p99Us / 1000).toFixed(2)} ms, ${r.cpuUsPerRequest.toFixed(1)} µs CPU/request, ${r.upstreamRequests} upstream requests${r.loopDelay === undefined ? '' : `, event loop delay max ${r.loopDelay.maxMs.toFixed(1)} ms`}${r.mbPerSec === undefined ? '' : `, ${r.mbPerSec.toFixed(0)} MiB/s, peak RSS ${(r.peakRssMb ?? 0).toFixed(1)} MiB`}`,
          );
          if (!prepared.herd && r.serverCpuShare < 0.25)
            say(
              `  WARNING: ${spec.name} used its core only ${Math.round(r.serverCpuShare * 100)}% of this run: it was waiting, not working (a stalled load generator or a busy machine); check this round's figures`,
            );
        }
      }
      if (scenario.name === 'fresh-tokens' && prepared.load.list?.kind === 'file') {
        extras['joseEs256VerifyPerSec'] = await joseRate(prepared.load.list.file, keys.publicKeyFile);
      }
    }
    const rows = summarise(records, reference);
    const notes: string[] = [];
    const jose = extras['joseEs256VerifyPerSec'];
    if (jose !== undefined) {
      for (const row of rows.filter((r) => r.scenario === 'fresh-tokens' && r.server !== 'baseline'))
        notes.push(
          `fresh-tokens: ${row.server} ${Math.round(row.reqPerSec)} req/s = ${(row.reqPerSec / jose).toFixed(2)}× jose's raw ES256 verify rate (${Math.round(jose)}/s, one at a time, same core)`,
        );
    }
    for (const row of rows.filter((r) => r.scenario === 'herd' && r.server !== 'baseline'))
      notes.push(`herd: ${row.server} made ${row.upstreamRequests} upstream request(s) for 1,000 concurrent requests`);
    notes.push(...mixedNotes(records));
    notes.push(...featureNotes(records, rows));
    notes.push(...tailNotes(records));
    for (const b of built) notes.push(`${b.name}: ${b.source}, started as \`${startLine(b)}\``);
    if (measured.some((n) => n === 'baseline' || n.startsWith('fastify')) || opts.compare !== null)
      notes.push(`the baseline and the peer run compiled, with this checkout's start flags (${built[0]?.nodeFlags.join(' ')})`);
    const comparisons = (opts.compare ?? []).map(
      (spec) => `\n\nThis checkout (hypergate) against ${checkoutName(spec)}:\n\n${comparisonTable(records, checkoutName(spec), 'hypergate')}`,
    );
    const text = `${table(rows, reference)}\n${notes.map((n) => `\n- ${n}`).join('')}${comparisons.join('')}\n`;
    process.stdout.write(`\n${text}`);
    const info = runInfo(opts.tool === 'wrk' ? 'wrk (-t1)' : 'autocannon', {
      connections: opts.connections,
      duration: `${opts.seconds}s`,
      warmup: `${opts.warmSeconds}s`,
      rounds: opts.rounds,
      ...(opts.tracing === null ? {} : { tracing: `on, sampling ${opts.tracing} of new traces` }),
      accessLog: opts.accessLog ? (opts.accessLogTo === 'file' ? 'on, to a file' : 'on, to /dev/null') : 'off',
      ...(opts.workers > 1 ? { workers: opts.workers } : {}),
      taskset: hasTaskset ? (opts.workers > 1 ? 'hypergate unpinned, other servers core 0, load core 1' : 'servers core 0, load core 1') : 'none',
      ...(opts.compare === null
        ? {}
        : {
            compare: built
              .slice(1)
              .map((b) => `${b.name} (${b.source})`)
              .join(', '),
          }),
    });
    const json = writeJson(opts.resultsDir, info, { reference, summary: rows, extras, records });
    // The picture is drawn from the JSON just written: what is recorded is what is shown.
    const chart = renderChart(chartFromJson(json));
    const chartFile = json.replace(/\.json$/, '.svg');
    writeFileSync(chartFile, chart);
    say(`raw results: ${json}\nchart: ${chartFile}`);
    if (opts.record) {
      appendResults(resolve(ROOT, 'bench/RESULTS.md'), info, text);
      say('appended to bench/RESULTS.md');
      // The README's picture is of the latest recorded single-process run with the baseline in it:
      // not a --compare, not a --workers run (unpinned, so its bars would not compare), not a traced
      // run, not a run of hypergate alone (no 1.0 line to draw).
      if (opts.compare === null && opts.workers === 1 && opts.tracing === null && rows.some((r) => r.server === reference)) {
        writeFileSync(resolve(ROOT, 'bench/chart.svg'), chart);
        say('chart in bench/chart.svg');
      }
    }
  } finally {
    for (const h of helpers) await h.stop();
    if (collector !== null) say(`collector: ${collector.exports()} span exports received`);
    await collector?.close();
    await redis?.close();
    await upstream?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a checkout's `npm start -- --config FILE` runs, relative to its build folder. */
function startLine(b: BuiltCheckout): string {
  return `node ${[...b.nodeFlags, relative(b.root, b.entry)].join(' ')} --config FILE`;
}

/** Runs the steps one after the other (builds: one at a time on a small machine). */
async function sequence<T>(steps: readonly (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  for (const step of steps) out.push(await step());
  return out;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: FAILED: ${(err as Error).message}\n`);
  process.exit(1);
});
