/**
 * Medians of the rounds, the table (markdown, so the terminal and bench/RESULTS.md show the
 * same thing), the raw JSON under bench/results/ and the entry appended to bench/RESULTS.md.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from './measure.ts';

export interface Summary {
  readonly scenario: string;
  readonly server: string;
  readonly rounds: number;
  readonly reqPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly errors: number;
  readonly cpuUsPerRequest: number;
  readonly upstreamRequests: number;
  /** req/s and p99 over the reference server's (the baseline, or the --compare checkout); null without one. */
  readonly ratio: number | null;
  readonly p99Ratio: number | null;
}

export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function summarise(records: readonly RunRecord[], reference: string): Summary[] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    const key = `${r.scenario}\u0000${r.server}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rows = [...groups.values()].map((runs) => {
    const first = runs[0] as RunRecord;
    return {
      scenario: first.scenario,
      server: first.server,
      rounds: runs.length,
      reqPerSec: median(runs.map((r) => r.reqPerSec)),
      p50Us: median(runs.map((r) => r.p50Us)),
      p99Us: median(runs.map((r) => r.p99Us)),
      errors: runs.reduce((n, r) => n + r.errors + r.badStatus, 0),
      cpuUsPerRequest: median(runs.map((r) => r.cpuUsPerRequest)),
      upstreamRequests: median(runs.map((r) => r.upstreamRequests)),
    };
  });
  return rows.map((row) => {
    const ref = rows.find((r) => r.scenario === row.scenario && r.server === reference);
    return { ...row, ratio: ref === undefined ? null : row.reqPerSec / ref.reqPerSec, p99Ratio: ref === undefined ? null : row.p99Us / ref.p99Us };
  });
}

/**
 * The mixed scenario per server: reads/s and writes/s (medians of the rounds), the share of reads
 * answered from cache and the reads older than an acknowledged write (over all rounds; a run with
 * any fails before it is recorded, so this says 0 of how many).
 */
export function mixedNotes(records: readonly RunRecord[]): string[] {
  const notes: string[] = [];
  for (const server of new Set(records.filter((r) => r.mixed !== undefined).map((r) => r.server))) {
    const runs = records.filter((r) => r.server === server && r.mixed !== undefined);
    const perSec = (count: (r: RunRecord) => number): number => Math.round(median(runs.map((r) => count(r) / (r.durationUs / 1e6))));
    const reads = runs.reduce((n, r) => n + (r.mixed?.reads ?? 0), 0);
    const hits = runs.reduce((n, r) => n + (r.mixed?.cacheHits ?? 0), 0);
    const stale = runs.reduce((n, r) => n + (r.mixed?.staleReads ?? 0), 0);
    const writeP50 = median(runs.map((r) => r.mixed?.writeP50Us ?? 0));
    const writeP99 = median(runs.map((r) => r.mixed?.writeP99Us ?? 0));
    notes.push(
      `mixed: ${server} ${perSec((r) => r.mixed?.reads ?? 0)} reads/s and ${perSec((r) => r.mixed?.writes ?? 0)} writes/s; ${((100 * hits) / Math.max(1, reads)).toFixed(1)}% of reads from cache; ${stale} of ${reads} reads older than an acknowledged write; PATCH p50 ${ms(writeP50)} ms, p99 ${ms(writeP99)} ms`,
    );
  }
  return notes;
}

/** The feature scenarios whose hit is set against `hot`'s of the same server, when both ran. */
const AGAINST_HOT = ['vary-claim', 'query', 'introspected'];

/**
 * The feature scenarios: each hit's req/s and CPU per request against `hot`'s of the same server
 * (when the run has `hot`), and `download`'s MiB/s (medians of the rounds) and peak RSS (the
 * highest of the rounds) per server, hypergate's against the upstream fetched directly.
 */
export function featureNotes(records: readonly RunRecord[], rows: readonly Summary[]): string[] {
  const notes: string[] = [];
  for (const row of rows.filter((r) => AGAINST_HOT.includes(r.scenario))) {
    const hot = rows.find((r) => r.scenario === 'hot' && r.server === row.server);
    if (hot !== undefined)
      notes.push(
        `${row.scenario}: ${row.server} ${Math.round(row.reqPerSec)} req/s = ${(row.reqPerSec / hot.reqPerSec).toFixed(2)}× its hot (${Math.round(hot.reqPerSec)}), ${row.cpuUsPerRequest.toFixed(1)} against ${hot.cpuUsPerRequest.toFixed(1)} µs CPU/request`,
      );
  }
  const downloads = records.filter((r) => r.mbPerSec !== undefined);
  const mbPerSec = (server: string): number => median(downloads.filter((r) => r.server === server).map((r) => r.mbPerSec ?? 0));
  const direct = downloads.some((r) => r.server === 'upstream-direct') ? mbPerSec('upstream-direct') : null;
  for (const server of new Set(downloads.map((r) => r.server))) {
    const peak = Math.max(...downloads.filter((r) => r.server === server).map((r) => r.peakRssMb ?? 0));
    const against = direct === null || server === 'upstream-direct' ? '' : ` (${(mbPerSec(server) / direct).toFixed(2)}× the upstream fetched directly)`;
    notes.push(`download: ${server} ${mbPerSec(server).toFixed(0)} MiB/s${against}, peak RSS ${peak.toFixed(1)} MiB`);
  }
  return notes;
}

/**
 * The tail of each scenario per hypergate: its event loop's longest delay (over all rounds, and
 * each round's) and the median of the rounds' p99 delays, beside its request p99 and the
 * baseline's in the same rounds (targets: no delay over 10 ms, p99 within 2× the baseline's).
 */
export function tailNotes(records: readonly RunRecord[]): string[] {
  const notes: string[] = [];
  const scenarios = new Set(records.filter((r) => r.loopDelay !== undefined).map((r) => r.scenario));
  for (const scenario of scenarios) {
    const base = records.filter((r) => r.scenario === scenario && r.server === 'baseline');
    for (const server of new Set(records.filter((r) => r.scenario === scenario && r.loopDelay !== undefined).map((r) => r.server))) {
      const runs = records.filter((r) => r.scenario === scenario && r.server === server);
      const maxes = runs.map((r) => r.loopDelay?.maxMs ?? Number.NaN);
      const p99 = median(runs.map((r) => r.loopDelay?.p99Ms ?? Number.NaN));
      const requestP99 = median(runs.map((r) => r.p99Us));
      const beside =
        base.length === 0
          ? ''
          : `; request p99 ${ms(requestP99)} ms against the baseline's ${ms(median(base.map((r) => r.p99Us)))} ms (${(requestP99 / median(base.map((r) => r.p99Us))).toFixed(2)}×)`;
      notes.push(
        `${scenario}: ${server}'s event loop: longest delay ${Math.max(...maxes).toFixed(1)} ms (per round ${maxes.map((m) => m.toFixed(1)).join(', ')}), p99 ${p99.toFixed(1)} ms${beside}`,
      );
    }
  }
  return notes;
}

const ms = (us: number): string => (us / 1000).toFixed(2);
const times = (x: number | null): string => (x === null ? '' : `${x.toFixed(2)}×`);

export function table(rows: readonly Summary[], reference: string): string {
  const lines = [
    `| scenario | server | req/s | p50 ms | p99 ms | errors + non-2xx | req/s × ${reference} | p99 × ${reference} | server CPU µs/req | upstream requests |`,
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.scenario} | ${r.server} | ${Math.round(r.reqPerSec)} | ${ms(r.p50Us)} | ${ms(r.p99Us)} | ${r.errors} | ${times(r.ratio)} | ${times(r.p99Ratio)} | ${Number.isNaN(r.cpuUsPerRequest) ? 'n/a' : r.cpuUsPerRequest.toFixed(1)} | ${r.upstreamRequests} |`,
    );
  }
  return lines.join('\n');
}

export function cpuModel(): string {
  return cpus()[0]?.model.trim() ?? 'unknown CPU';
}

export interface RunInfo {
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  readonly cores: number;
  readonly tool: string;
  readonly options: Readonly<Record<string, unknown>>;
}

export function runInfo(tool: string, options: Readonly<Record<string, unknown>>): RunInfo {
  return { date: new Date().toISOString(), node: process.version, cpu: cpuModel(), cores: cpus().length, tool, options };
}

/** Raw JSON of one run in `dir`; returns its path. */
export function writeJson(dir: string, info: RunInfo, body: Readonly<Record<string, unknown>>): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${info.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ ...info, ...body }, null, 2)}\n`);
  return file;
}

/** Written when bench/RESULTS.md is missing; the same as the committed file's first paragraph. */
const RESULTS_HEADER = `# Benchmark results

Appended by \`npm run bench\` (bench/run.ts): one section per run, newest last, with the date,
Node version, CPU, load generator and options. Figures are medians of interleaved rounds; the
servers run pinned to one core and the load generator to the other (bench/README.md).
Raw per-round figures of each run are written to bench/results/ (not committed). Compare
ratios within one section only: absolute req/s depend on the machine and what else it runs.
\`npm run bench -- --profile\` appends the top self-time frames of \`hot\`, and \`npm run bench:memory\`
its memory table. Smoke runs (\`--quick\`) are never recorded.
`;

/** The line that says on what and how a run was made (bench/RESULTS.md, the chart's subtitle). */
export function describeRun(info: RunInfo): string {
  const opts = Object.entries(info.options)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
  return `Node ${info.node}, ${info.cpu} (${info.cores} cores), load generator ${info.tool}; ${opts}`;
}

export function appendResults(file: string, info: RunInfo, body: string): void {
  if (!existsSync(file) || readFileSync(file, 'utf8').trim() === '') writeFileSync(file, RESULTS_HEADER);
  appendFileSync(file, `\n## ${info.date}\n\n${describeRun(info)}\n\n${body}\n`);
}
