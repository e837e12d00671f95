/**
 * The table of a --compare run: per scenario, this checkout (B) against the other one (A, the
 * reference) and each against the baseline of the same rounds, in req/s, server CPU µs per
 * request and latency, with a verdict on each difference (bench/lib/verdict.ts states the rule).
 */
import type { RunRecord } from './measure.ts';
import { median } from './report.ts';
import { decide, RULE, spread } from './verdict.ts';

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const ms = (us: number): string => (us / 1000).toFixed(2);

function rounds(records: readonly RunRecord[], scenario: string, server: string): RunRecord[] {
  return records.filter((r) => r.scenario === scenario && r.server === server).sort((x, y) => x.round - y.round);
}

/** `server`'s req/s over the baseline's, round by round (rounds are interleaved, so each pair ran minutes apart at most). */
export function perRoundRatios(records: readonly RunRecord[], scenario: string, server: string, baseline = 'baseline'): number[] {
  const base = new Map(rounds(records, scenario, baseline).map((r) => [r.round, r.reqPerSec]));
  return rounds(records, scenario, server).flatMap((r) => {
    const b = base.get(r.round);
    return b === undefined ? [] : [r.reqPerSec / b];
  });
}

function ceiling(ratios: readonly number[]): string {
  if (ratios.length === 0) return 'n/a';
  const range = ratios.length > 1 ? ` (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})` : '';
  return `${median(ratios).toFixed(3)}${range}`;
}

/**
 * The comparison of `b` (this checkout) with `a` (the reference checkout) in every scenario both
 * ran, as markdown, with the rule under it.
 */
export function comparisonTable(records: readonly RunRecord[], a: string, b: string): string {
  const lines = [
    `| scenario | measure | ${a} | ${b} | ${b} / ${a} | spread of rounds (${a}; ${b}) | verdict |`,
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
  ];
  const scenarios = [...new Set(records.map((r) => r.scenario))];
  for (const scenario of scenarios) {
    const ra = rounds(records, scenario, a);
    const rb = rounds(records, scenario, b);
    if (ra.length === 0 || rb.length === 0) continue;
    const names = { a, b };
    const row = (measure: string, pick: (r: RunRecord) => number, show: (x: number) => string, words?: { up: string; down: string }, judged = true): void => {
      const xa = ra.map(pick);
      const xb = rb.map(pick);
      if (xa.some(Number.isNaN) || xb.some(Number.isNaN)) return;
      const v = decide(xa, xb, names, words);
      lines.push(
        `| ${scenario} | ${measure} | ${show(median(xa))} | ${show(median(xb))} | ${v.ratio.toFixed(3)} | ${pct(spread(xa))}; ${pct(spread(xb))} | ${judged ? v.text : ''} |`,
      );
    };
    row(
      'req/s',
      (r) => r.reqPerSec,
      (x) => String(Math.round(x)),
    );
    row(
      'server CPU µs/request',
      (r) => r.cpuUsPerRequest,
      (x) => x.toFixed(2),
      { up: 'more CPU per request', down: 'less CPU per request' },
    );
    row('p50 ms', (r) => r.p50Us, ms, undefined, false);
    row('p99 ms', (r) => r.p99Us, ms, undefined, false);
    const ca = perRoundRatios(records, scenario, a);
    const cb = perRoundRatios(records, scenario, b);
    if (ca.length > 0 && cb.length > 0) {
      const v = decide(ca, cb, names);
      lines.push(
        `| ${scenario} | req/s × baseline, per round: median (min–max) | ${ceiling(ca)} | ${ceiling(cb)} | ${v.ratio.toFixed(3)} | ${pct(spread(ca))}; ${pct(spread(cb))} | ${v.text} |`,
      );
    }
  }
  return `${lines.join('\n')}\n\n${RULE} Latencies are given, not judged.`;
}
