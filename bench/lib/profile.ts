/**
 * Top self-time frames of a V8 CPU profile (`node --cpu-prof`), by function and place, for
 * --profile: where a cache hit's time goes.
 */
import { readFileSync } from 'node:fs';
import { ROOT } from './proc.ts';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
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

function place(url: string, line: number): string {
  if (url === '') return '';
  const short = url.replace(`file://${ROOT}/`, '').replace(/^file:\/\/.*\/node_modules\//, '');
  return ` ${short}:${line + 1}`;
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
    const key = name + place(node.callFrame.url, node.callFrame.lineNumber);
    self.set(key, (self.get(key) ?? 0) + us);
  });
  const frames = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, percent: (100 * us) / Math.max(1, busyUs) }));
  return { frames, busyMs: busyUs / 1000, idleMs: idleUs / 1000 };
}

export function framesTable(frames: readonly Frame[]): string {
  const lines = ['| self % (of busy) | self ms | frame |', '| ---: | ---: | --- |'];
  for (const f of frames) lines.push(`| ${f.percent.toFixed(1)} | ${f.selfMs.toFixed(0)} | \`${f.frame}\` |`);
  return lines.join('\n');
}
