/**
 * --profile: hypergate (or the servers --servers names) under one scenario (the first of
 * --scenario; `hot` by default) with `node --cpu-prof`, and the top self-time frames of the
 * measured part of the profile, by function and place: where a request's time goes. Two servers
 * or more are also set side by side, frame by frame.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload, type SourceMapping } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutName } from './builds.ts';
import { runLoad } from './load.ts';
import { scenarioStart, warmList } from './measure.ts';
import type { Options } from './options.ts';
import { ROOT } from './proc.ts';
import { SCENARIOS } from './scenario-list.ts';
import type { PrepareContext, Scenario } from './scenarios.ts';
import { hypergate, SERVERS, type ServerSpec, type StartContext } from './servers.ts';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
}

interface CpuProfile {
  readonly startTime: number;
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface Frame {
  readonly frame: string;
  readonly selfMs: number;
  /** Share of the time the process was not idle. */
  readonly percent: number;
}

const sourceMaps = new Map<string, SourceMap | null>();

/** V8's sampling interval under --cpu-prof (its default, 1 ms), in µs. */
const SAMPLE_INTERVAL_US = 1000;
/**
 * The most one sample counts for. A sample's time is the wall-clock gap since the one before it;
 * on a loaded machine the process is sometimes off the CPU for tens of ms between two samples,
 * and that whole gap would be charged to whatever frame happened to be on top (one 188 ms sample
 * made a header check look like 2 µs a request). Past this, the gap is time off the CPU, counted
 * apart (offCpuUs), not a frame's.
 */
const MAX_SAMPLE_US = 2 * SAMPLE_INTERVAL_US;

/** The source map beside a compiled file (`dist/x.js.map`, as `npm run build` writes it), or null. */
function sourceMapOf(url: string): SourceMap | null {
  let map = sourceMaps.get(url);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      map = null;
    }
    sourceMaps.set(url, map);
  }
  return map;
}

/** `file:line` of a frame; a compiled frame is named by its TypeScript source, so profiles of builds and of tsx runs read alike. */
function place(url: string, line: number, column: number): string {
  if (url === '') return '';
  // findEntry gives {} where the map has nothing.
  const entry: Partial<SourceMapping> | undefined = url.startsWith('file://') && url.endsWith('.js') ? sourceMapOf(url)?.findEntry(line, column) : undefined;
  const [where, at] =
    entry?.originalSource !== undefined && entry.originalLine !== undefined ? [new URL(entry.originalSource, url).href, entry.originalLine] : [url, line];
  // A package by its path inside node_modules; a checkout's own file from its build folder (bench/lib/builds.ts names it <name>-<12 hex digits>).
  const short = where
    .replace(`file://${ROOT}/`, '')
    .replace(/^file:\/\/.*\/node_modules\//, '')
    .replace(/^file:\/\/.*\/[\w.-]+-[0-9a-f]{12}\//, '');
  return ` ${short}:${at + 1}`;
}

/**
 * Self time per frame, in µs, and the busy and idle totals. With `window` (µs of the monotonic
 * clock, which V8's profile timestamps and process.hrtime share on Linux), only samples inside it
 * count: the load, not start-up. A sample counts for MAX_SAMPLE_US at most; the rest of its gap
 * is `offCpuUs`.
 */
function selfTimes(
  file: string,
  window?: { readonly fromUs: number; readonly toUs: number },
): { self: Map<string, number>; busyUs: number; idleUs: number; offCpuUs: number } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  let offCpuUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const gap = profile.timeDeltas[i] ?? 0;
    at += gap;
    if (node === undefined || (window !== undefined && (at < window.fromUs || at > window.toUs))) return;
    const us = Math.min(gap, MAX_SAMPLE_US);
    offCpuUs += gap - us;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += us;
      return;
    }
    busyUs += us;
    const key = name + place(node.callFrame.url, node.callFrame.lineNumber, node.callFrame.columnNumber);
    self.set(key, (self.get(key) ?? 0) + us);
  });
  return { self, busyUs, idleUs, offCpuUs };
}

/** The `count` frames with the most self time, from selfTimes. */
function topFrames(self: ReadonlyMap<string, number>, busyUs: number, count: number): Frame[] {
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, percent: (100 * us) / Math.max(1, busyUs) }));
}

/** One profiled server: its name, µs of self time a request per frame, and busy µs a request. */
export interface ProfiledServer {
  readonly name: string;
  readonly perRequest: ReadonlyMap<string, number>;
  readonly busyUsPerRequest: number;
}

/**
 * The servers side by side in µs a request: the busy total, then the `count` frames whose self
 * time differs most from the first server's. Read against the baseline, it says where each of the
 * other servers' extra µs go.
 */
export function sideBySide(servers: readonly ProfiledServer[], count = 30): string {
  const [first] = servers;
  if (first === undefined) return '';
  const frames = new Set(servers.flatMap((s) => [...s.perRequest.keys()]));
  const spread = (frame: string): number => Math.max(...servers.map((s) => Math.abs((s.perRequest.get(frame) ?? 0) - (first.perRequest.get(frame) ?? 0))));
  const rows = [...frames].sort((a, b) => spread(b) - spread(a)).slice(0, count);
  const us = (n: number): string => n.toFixed(3);
  const lines = [
    `| frame | ${servers.map((s) => `${s.name} µs/request`).join(' | ')} |`,
    `| --- | ${servers.map(() => '---:').join(' | ')} |`,
    `| busy, all frames | ${servers.map((s) => us(s.busyUsPerRequest)).join(' | ')} |`,
  ];
  for (const frame of rows) lines.push(`| \`${frame}\` | ${servers.map((s) => us(s.perRequest.get(frame) ?? 0)).join(' | ')} |`);
  return lines.join('\n');
}

/** `requests`: how many the profiled load answered, to give each frame's time per request. */
export function framesTable(frames: readonly Frame[], requests?: number): string {
  const perRequest = requests !== undefined && requests > 0;
  const lines = [`| self % (of busy) | self ms |${perRequest ? ' µs/request |' : ''} frame |`, `| ---: | ---: |${perRequest ? ' ---: |' : ''} --- |`];
  for (const f of frames)
    lines.push(`| ${f.percent.toFixed(1)} | ${f.selfMs.toFixed(0)} |${perRequest ? ` ${((f.selfMs * 1000) / requests).toFixed(3)} |` : ''} \`${f.frame}\` |`);
  return lines.join('\n');
}

/**
 * --profile: the scenario against hypergate (or each server --servers names) under --cpu-prof (the
 * profile is written when it exits on SIGTERM); with --compare, against each other checkout.
 * Each server gets its list of top frames; two or more are also set side by side in µs a request.
 */
export async function profileHot(opts: Options, start: StartContext, prep: PrepareContext, dir: string): Promise<string> {
  const specs =
    opts.compare === null
      ? opts.profileServers.map((n) => SERVERS[n] as ServerSpec)
      : [hypergate(), ...opts.compare.map((spec) => hypergate(checkoutName(spec), spec))];
  const summaries: string[] = [];
  const profiled: ProfiledServer[] = [];
  for (const [i, spec] of specs.entries()) {
    const one = await profileOne(spec, opts, start, prep, join(dir, `cpu-prof-${i}`));
    summaries.push(one.summary);
    profiled.push(one.profiled);
  }
  if (profiled.length > 1)
    summaries.push(`Side by side (self time in µs a request; the frames that differ most from ${specs[0]?.name ?? ''}):\n\n${sideBySide(profiled)}\n`);
  return summaries.join('\n');
}

async function profileOne(
  spec: ServerSpec,
  opts: Options,
  start: StartContext,
  prep: PrepareContext,
  profDir: string,
): Promise<{ summary: string; profiled: ProfiledServer }> {
  const ctx = { ...start, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] };
  const name = profiledScenario(opts);
  const prepared = (SCENARIOS.find((s) => s.name === name) as Scenario).prepare(prep);
  const server = await spec.start(scenarioStart(ctx, prepared));
  const url = `http://127.0.0.1:${server.port}`;
  if ('listFile' in prepared.warm) await warmList(url, prepared.warm.listFile, prepared.load.headers, spec.name);
  else if (opts.warmSeconds > 0) await runLoad(opts.tool, url, prepared.warm.load, opts.connections, opts.warmSeconds);
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const load = await runLoad(opts.tool, url, prepared.load, opts.connections, opts.seconds);
  const toUs = Number(process.hrtime.bigint() / 1000n);
  await server.stop('SIGTERM');
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`${spec.name} wrote no CPU profile`);
  const { self, busyUs, idleUs, offCpuUs } = selfTimes(join(profDir, file), { fromUs, toUs });
  const frames = topFrames(self, busyUs, 30);
  mkdirSync(opts.resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  copyFileSync(join(profDir, file), join(opts.resultsDir, `${name}-${spec.name.replace(/[^\w.-]/g, '_')}-${stamp}.cpuprofile`));
  const requests = Math.max(1, load.requests);
  const busyUsPerRequest = busyUs / requests;
  const summary = `CPU profile of ${spec.name} under ${name} (${opts.tool}, ${opts.connections} connections, ${opts.seconds} s after ${opts.warmSeconds} s of warm-up; samples of the measured part only): ${load.requests} requests, busy ${(busyUs / 1000).toFixed(0)} ms (${busyUsPerRequest.toFixed(2)} µs a request), idle ${(idleUs / 1000).toFixed(0)} ms, off the CPU between samples ${(offCpuUs / 1000).toFixed(0)} ms (not counted). Top self-time frames:\n\n${framesTable(frames, load.requests)}\n`;
  writeFileSync(join(opts.resultsDir, `profile-${spec.name.replace(/[^\w.-]/g, '_')}-${stamp}.md`), summary);
  const perRequest = new Map([...self].map(([frame, us]) => [frame, us / requests]));
  return { summary, profiled: { name: spec.name, perRequest, busyUsPerRequest } };
}

/** The scenario --profile runs: the first of --scenario (hot when none is named). */
export function profiledScenario(opts: Options): string {
  return opts.scenarios[0] ?? 'hot';
}
