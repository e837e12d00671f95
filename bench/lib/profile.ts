/**
 * --profile: hypergate under one scenario (the first of --scenario; `hot` by default) with
 * `node --cpu-prof`, and the top self-time frames of the measured part of the profile, by function
 * and place: where a request's time goes.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload, type SourceMapping } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoad } from './load.ts';
import { warmList } from './measure.ts';
import type { Options } from './options.ts';
import { ROOT } from './proc.ts';
import { SCENARIOS, type PrepareContext, type Scenario } from './scenarios.ts';
import { hypergate, type ServerSpec, type StartContext } from './servers.ts';

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
  const [where, at] = entry?.originalSource !== undefined && entry.originalLine !== undefined ? [new URL(entry.originalSource, url).href, entry.originalLine] : [url, line];
  const short = where.replace(`file://${ROOT}/`, '').replace(/^file:\/\/.*\/node_modules\//, '');
  return ` ${short}:${at + 1}`;
}

/**
 * Self time per frame. With `window` (µs of the monotonic clock, which V8's profile timestamps and
 * process.hrtime share on Linux), only samples inside it count: the load, not start-up.
 */
export function topFrames(file: string, count = 25, window?: { readonly fromUs: number; readonly toUs: number }): { frames: Frame[]; busyMs: number; idleMs: number } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (node === undefined || (window !== undefined && (at < window.fromUs || at > window.toUs))) return;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += us;
      return;
    }
    busyUs += us;
    const key = name + place(node.callFrame.url, node.callFrame.lineNumber, node.callFrame.columnNumber);
    self.set(key, (self.get(key) ?? 0) + us);
  });
  const frames = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, percent: (100 * us) / Math.max(1, busyUs) }));
  return { frames, busyMs: busyUs / 1000, idleMs: idleUs / 1000 };
}

/** `requests`: how many the profiled load answered, to give each frame's time per request. */
export function framesTable(frames: readonly Frame[], requests?: number): string {
  const perRequest = requests !== undefined && requests > 0;
  const lines = [`| self % (of busy) | self ms |${perRequest ? ' µs/request |' : ''} frame |`, `| ---: | ---: |${perRequest ? ' ---: |' : ''} --- |`];
  for (const f of frames) lines.push(`| ${f.percent.toFixed(1)} | ${f.selfMs.toFixed(0)} |${perRequest ? ` ${((f.selfMs * 1000) / requests).toFixed(3)} |` : ''} \`${f.frame}\` |`);
  return lines.join('\n');
}

/**
 * --profile: the scenario against hypergate under --cpu-prof (the profile is written when it exits on
 * SIGTERM); with --compare, then against each other checkout, so the lists of frames can be
 * read side by side in µs per request.
 */
export async function profileHot(opts: Options, start: StartContext, prep: PrepareContext, dir: string): Promise<string> {
  const specs = [hypergate()];
  for (const dir of opts.compare ?? []) specs.push(hypergate(`hypergate@${basename(dir)}`, dir));
  const summaries: string[] = [];
  for (const [i, spec] of specs.entries()) summaries.push(await profileOne(spec, opts, start, prep, join(dir, `cpu-prof-${i}`)));
  return summaries.join('\n');
}

async function profileOne(spec: ServerSpec, opts: Options, start: StartContext, prep: PrepareContext, profDir: string): Promise<string> {
  const ctx = { ...start, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] };
  const name = profiledScenario(opts);
  const prepared = (SCENARIOS.find((s) => s.name === name) as Scenario).prepare(prep);
  const server = await spec.start(ctx);
  const url = `http://127.0.0.1:${server.port}`;
  if ('listFile' in prepared.warm) await warmList(url, prepared.warm.listFile, prepared.load.headers, spec.name);
  else if (opts.warmSeconds > 0) await runLoad(opts.tool, url, prepared.warm.load, opts.connections, opts.warmSeconds);
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const load = await runLoad(opts.tool, url, prepared.load, opts.connections, opts.seconds);
  const toUs = Number(process.hrtime.bigint() / 1000n);
  await server.stop('SIGTERM');
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`${spec.name} wrote no CPU profile`);
  const { frames, busyMs, idleMs } = topFrames(join(profDir, file), 30, { fromUs, toUs });
  mkdirSync(opts.resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  copyFileSync(join(profDir, file), join(opts.resultsDir, `${name}-${spec.name.replace(/[^\w.-]/g, '_')}-${stamp}.cpuprofile`));
  const busyUsPerRequest = (busyMs * 1000) / Math.max(1, load.requests);
  const summary = `CPU profile of ${spec.name} under ${name} (${opts.tool}, ${opts.connections} connections, ${opts.seconds} s after ${opts.warmSeconds} s of warm-up; samples of the measured part only): ${load.requests} requests, busy ${busyMs.toFixed(0)} ms (${busyUsPerRequest.toFixed(2)} µs a request), idle ${idleMs.toFixed(0)} ms. Top self-time frames:\n\n${framesTable(frames, load.requests)}\n`;
  writeFileSync(join(opts.resultsDir, `profile-${spec.name.replace(/[^\w.-]/g, '_')}-${stamp}.md`), summary);
  return summary;
}

/** The scenario --profile runs: the first of --scenario (hot when none is named). */
export function profiledScenario(opts: Options): string {
  return opts.scenarios[0] ?? 'hot';
}
