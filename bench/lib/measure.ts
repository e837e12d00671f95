/**
 * One measured run: a fresh server process (so no run inherits another's caches), warm-up, a
 * check of the answers, then the load, with the server's CPU time and the upstream's request
 * count read before and after. Any error or unexpected status throws: no figure is printed for
 * a run that did not do what it claims.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { header, httpGet } from './http.ts';
import { parseMarked, runLoad, type LoadResult, type MixedCounts, type Tool } from './load.ts';
import { scrapeLoopDelay, type LoopDelay } from './loop-delay.ts';
import { collect, LOAD_CORE, nodeArgv, peakRssBytes, spawnPinned, treeCpuMs } from './proc.ts';
import { FRESH_RATE_CAP, HERD_CONNECTIONS, type DownloadLoad, type MixedLoad, type Prepared, type Sample } from './scenarios.ts';
import type { ServerSpec, StartContext, Upstream } from './servers.ts';

export interface RunOptions {
  readonly tool: Tool;
  readonly connections: number;
  readonly seconds: number;
  readonly warmSeconds: number;
}

export interface RunRecord {
  readonly scenario: string;
  readonly server: string;
  readonly round: number;
  readonly reqPerSec: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  readonly requests: number;
  readonly durationUs: number;
  readonly errors: number;
  readonly badStatus: number;
  /** Server CPU (user + system) per request, in µs; NaN without /proc. */
  readonly cpuUsPerRequest: number;
  /** Requests the upstream answered during the measured part. */
  readonly upstreamRequests: number;
  /**
   * Server CPU time (utime + stime) over the run's wall time. Below 1 even when the server is the
   * bottleneck (the kernel's loopback work is not charged to it), but near 0 means it waited: a
   * stalled load generator or machine.
   */
  readonly serverCpuShare: number;
  /** The mixed scenario's counts. */
  readonly mixed?: MixedCounts;
  /** A hypergate's event-loop delays over the measured part (loop-delay.ts); absent for the other servers. */
  readonly loopDelay?: LoopDelay;
  /** `download`: body bytes read a second (MiB/s), and the server's peak RSS (its kernel high-water mark, in MiB; a fresh process per run). */
  readonly mbPerSec?: number;
  readonly peakRssMb?: number;
}

async function checkSamples(url: string, samples: readonly Sample[], server: string): Promise<void> {
  for (const s of samples) {
    const answer = await httpGet(url + s.path, { ...s.headers });
    if (answer.status !== s.expect)
      throw new Error(`${server}: GET ${s.path} answered ${answer.status}, expected ${s.expect}: ${answer.body.toString().slice(0, 300)}`);
  }
}

/** Sends every request of a list once (32 at a time): each token is verified and cached. */
export async function warmList(url: string, file: string, accept: Readonly<Record<string, string>>, server: string): Promise<void> {
  const pool = new Pool(url, { connections: 32 });
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < lines.length) {
      const line = lines[next++] as string;
      const sp = line.indexOf(' ');
      const res = await pool.request({ method: 'GET', path: line.slice(0, sp), headers: { ...accept, authorization: `Bearer ${line.slice(sp + 1)}` } });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${server}: warm-up GET ${line.slice(0, sp)} answered ${res.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 32 }, worker));
  } finally {
    await pool.close();
  }
}

async function runHerd(port: number, prepared: Prepared): Promise<LoadResult> {
  const job = { port, path: prepared.load.path, headers: prepared.load.headers, connections: HERD_CONNECTIONS, expect: prepared.load.expect };
  const child = spawnPinned(LOAD_CORE, nodeArgv('bench/drivers/herd.ts', [JSON.stringify(job)]), { stdio: ['ignore', 'pipe', 'pipe'] });
  return parseMarked<LoadResult>(await collect(child, 'herd driver', 60_000), 'herd driver');
}

async function runMixed(port: number, load: MixedLoad, opts: RunOptions): Promise<LoadResult> {
  const job = { port, token: load.token, hotSet: load.hotSet, writeShare: load.writeShare, connections: opts.connections, seconds: opts.seconds };
  const child = spawnPinned(LOAD_CORE, nodeArgv('bench/drivers/mixed.ts', [JSON.stringify(job)]), { stdio: ['ignore', 'pipe', 'pipe'] });
  return parseMarked<LoadResult>(await collect(child, 'mixed driver', (opts.seconds + 60) * 1000), 'mixed driver');
}

async function runDownload(port: number, prepared: Prepared, load: DownloadLoad, opts: RunOptions): Promise<LoadResult> {
  const job = { port, path: prepared.load.path, headers: prepared.load.headers, connections: load.connections, seconds: opts.seconds, bytes: load.bytes };
  const child = spawnPinned(LOAD_CORE, nodeArgv('bench/drivers/download.ts', [JSON.stringify(job)]), { stdio: ['ignore', 'pipe', 'pipe'] });
  return parseMarked<LoadResult>(await collect(child, 'download driver', (opts.seconds + 120) * 1000), 'download driver');
}

/** The context a scenario's servers start with: its own config keys and environment, when it has any. */
export function scenarioStart(ctx: StartContext, prepared: Prepared): StartContext {
  return {
    ...ctx,
    ...(prepared.hypergateConfig === undefined ? {} : { config: prepared.hypergateConfig }),
    ...(prepared.env === undefined ? {} : { env: prepared.env }),
  };
}

/** `prepared` with its If-None-Match set to this server's current ETag of the load's path (Prepared.ownEtag). */
async function withOwnEtag(url: string, prepared: Prepared, server: string): Promise<Prepared> {
  const { 'if-none-match': _, ...plain } = prepared.load.headers;
  const answer = await httpGet(url + prepared.load.path, plain);
  const etag = header(answer, 'etag');
  if (answer.status !== 200 || etag === undefined)
    throw new Error(`${server}: GET ${prepared.load.path} answered ${answer.status} without the ETag the scenario needs`);
  const load = { ...prepared.load, headers: { ...plain, 'if-none-match': etag } };
  return {
    ...prepared,
    load,
    samples: prepared.samples.map((s) => ({ ...s, headers: load.headers })),
    warm: 'load' in prepared.warm ? { load } : prepared.warm,
  };
}

export async function measure(
  scenario: string,
  spec: ServerSpec,
  given: Prepared,
  ctx: StartContext,
  upstream: Upstream,
  opts: RunOptions,
  round: number,
): Promise<RunRecord> {
  const server = await spec.start(scenarioStart(ctx, given));
  try {
    const url = `http://127.0.0.1:${server.port}`;
    const prepared = given.ownEtag === true ? await withOwnEtag(url, given, spec.name) : given;
    await checkSamples(url, prepared.samples, spec.name);
    if ('listFile' in prepared.warm) await warmList(url, prepared.warm.listFile, prepared.load.headers, spec.name);
    else if (opts.warmSeconds > 0) await runLoad(opts.tool, url, prepared.warm.load, opts.connections, opts.warmSeconds);
    const pid = server.child.pid as number;
    // Empties the server's event-loop histogram: what the next scrape reads is the measured part's.
    await scrapeLoopDelay(server.adminPort);
    const cpuBefore = treeCpuMs(pid);
    const upstreamBefore = await upstream.count();
    const uncalled = prepared.uncalled ?? [];
    const uncalledBefore = await Promise.all(uncalled.map((c) => c.count()));
    const r = prepared.herd
      ? await runHerd(server.port, prepared)
      : prepared.mixed !== undefined
        ? await runMixed(server.port, prepared.mixed, opts)
        : prepared.download !== undefined
          ? await runDownload(server.port, prepared, prepared.download, opts)
          : await runLoad(opts.tool, url, prepared.load, opts.connections, opts.seconds);
    const cpu = treeCpuMs(pid) - cpuBefore;
    const peakRss = prepared.download === undefined ? 0 : peakRssBytes(pid);
    const called = (await Promise.all(uncalled.map((c) => c.count()))).map((n, i) => n - (uncalledBefore[i] ?? 0));
    const loopDelay = await scrapeLoopDelay(server.adminPort);
    const upstreamRequests = (await upstream.count()) - upstreamBefore;
    const what = `${scenario}/${spec.name} round ${round}`;
    if (r.requests === 0) throw new Error(`${what}: no request was answered`);
    if (r.errors > 0 || r.badStatus > 0)
      throw new Error(`${what}: ${r.errors} socket errors or time-outs and ${r.badStatus} unexpected statuses in ${r.requests} requests: no figure`);
    if (prepared.noRepeat && r.wrapped > 0 && spec.name !== 'baseline') {
      throw new Error(
        `${what}: the pre-minted token pool (${FRESH_RATE_CAP}/s for ${opts.seconds} s) ran out and tokens were reused: raise FRESH_RATE_CAP in bench/lib/scenarios.ts`,
      );
    }
    const stale = r.mixed?.staleReads ?? 0;
    if (stale > 0) throw new Error(`${what}: ${stale} of ${r.mixed?.reads} reads returned an older version than a PATCH already answered`);
    const mustAsk = prepared.hypergateUpstreamRequests;
    if (mustAsk !== undefined && spec.name.startsWith('hypergate') && upstreamRequests !== mustAsk) {
      const load = prepared.herd
        ? `${HERD_CONNECTIONS} concurrent requests for one uncached customer`
        : `${r.requests} requests for customers all cached in the warm-up`;
      throw new Error(`${what}: ${load} made ${upstreamRequests} upstream requests, not ${mustAsk}`);
    }
    called.forEach((n, i) => {
      if (n > 0 && spec.name.startsWith('hypergate'))
        throw new Error(`${what}: ${r.requests} requests for an answer cached in the warm-up made ${n} requests to the ${uncalled[i]?.what}, not 0`);
    });
    return {
      scenario,
      server: spec.name,
      round,
      reqPerSec: r.requests / (r.durationUs / 1e6),
      p50Us: r.p50Us,
      p90Us: r.p90Us,
      p99Us: r.p99Us,
      maxUs: r.maxUs,
      requests: r.requests,
      durationUs: r.durationUs,
      errors: r.errors,
      badStatus: r.badStatus,
      cpuUsPerRequest: (cpu * 1000) / r.requests,
      upstreamRequests,
      serverCpuShare: cpu / (r.durationUs / 1000),
      ...(r.mixed === undefined ? {} : { mixed: r.mixed }),
      ...(loopDelay === null ? {} : { loopDelay }),
      ...(prepared.download === undefined ? {} : { mbPerSec: r.bytes / 2 ** 20 / (r.durationUs / 1e6), peakRssMb: peakRss / 2 ** 20 }),
    };
  } finally {
    await server.stop();
  }
}
