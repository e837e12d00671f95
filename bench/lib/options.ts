import { resolve } from 'node:path';
import { parseArgs } from '../../src/lib/cli-args.ts';
import { wrkPath, type Tool } from './load.ts';
import { ROOT } from './proc.ts';
import { SCENARIOS } from './scenario-list.ts';
import { SERVERS } from './servers.ts';

export const USAGE = `usage: npm run bench -- [options]

  --scenario a,b      ${SCENARIOS.map((s) => s.name).join(', ')} (default: all)
  --servers a,b       ${Object.keys(SERVERS).join(', ')} (default: all)
  --duration S        seconds of load per run (default 10; --quick 2)
  --warmup S          seconds of warm-up load per run (default 2; --quick 0.5)
  --connections N     keep-alive connections (default 100; herd always uses 1000)
  --rounds N          interleaved rounds; figures are their medians (default 3; --quick 1)
  --tool T            wrk or autocannon (default: wrk when installed)
  --access-log on|off|file
                      hypergate's log.access (default on, as config/default.json has it),
                      written to /dev/null; file: on, written to a file (as npm start > FILE
                      does; the page cache's work is counted), deleted after each run
  --workers N         hypergate's server.workers (default 1); with more than one, hypergate runs
                      unpinned (its workers share both cores with the load generator)
  --tracing RATIO     start hypergate with tracing.enabled, sampling RATIO of new traces (0 to 1:
                      OTEL_TRACES_SAMPLER=parentbased_traceidratio), exporting to a collector
                      the harness runs (it reads and drops the spans); default: tracing off
  --quick             a smoke run of a few seconds per run: checks the harness, never the speed
                      (implies --no-record)
  --no-record         do not append to bench/RESULTS.md
  --results-dir DIR   where the raw JSON goes (default bench/results)
  --compare REF[,REF] hypergate from this checkout against each REF (a commit of this repository,
                      e.g. 04d1e05 or main, or a folder holding another checkout), with the
                      baseline, in interleaved rounds (baseline, REF, this checkout, ...); each
                      built in a folder of its own as its README says and started as its own
                      npm start -- --config FILE does; the first REF is the reference of the
                      comparison (default scenario: hot)
  --build-dir DIR     where checkouts are copied and built (default: a temporary folder removed
                      at the end); a kept DIR reuses builds whose sources have not changed
  --profile           run one scenario (the first of --scenario, default hot) against hypergate
                      (or each server --servers names, e.g. baseline,hypergate) under node
                      --cpu-prof; print each one's top frames, and two or more side by side
  --help              this text`;

export interface Options {
  readonly scenarios: readonly string[];
  readonly servers: readonly string[];
  readonly seconds: number;
  readonly warmSeconds: number;
  readonly connections: number;
  readonly rounds: number;
  readonly tool: Tool;
  readonly accessLog: boolean;
  /** Where the access log goes: /dev/null, or a file per run. */
  readonly accessLogTo: 'null' | 'file';
  /** hypergate's server.workers. */
  readonly workers: number;
  readonly quick: boolean;
  readonly record: boolean;
  readonly resultsDir: string;
  /** Other checkouts to measure against, commits or folders (the first is the reference); null without --compare. */
  readonly compare: readonly string[] | null;
  /** Where checkouts are built; null for a temporary folder. */
  readonly buildDir: string | null;
  readonly profile: boolean;
  /** The servers --profile runs: those --servers names, else hypergate alone. */
  readonly profileServers: readonly string[];
  /** --tracing: the ratio of new traces hypergate samples; null: tracing off. */
  readonly tracing: number | null;
}

function positive(name: string, raw: string | true | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number, got ${String(raw)}`);
  return n;
}

function ratio(name: string, raw: string | true | undefined): number | null {
  if (raw === undefined) return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name}: expected a ratio from 0 to 1, got ${String(raw)}`);
  return n;
}

function list(name: string, raw: string | true | undefined, known: readonly string[], fallback: readonly string[]): string[] {
  if (raw === undefined) return [...fallback];
  const names = String(raw).split(',').filter(Boolean);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`);
  return names;
}

/** Parses the command line; null for --help. Throws with a message naming the bad option. */
export function parseOptions(argv: readonly string[]): Options | null {
  const args = parseArgs(
    argv,
    [
      '--scenario',
      '--servers',
      '--duration',
      '--warmup',
      '--connections',
      '--rounds',
      '--tool',
      '--access-log',
      '--results-dir',
      '--compare',
      '--workers',
      '--build-dir',
      '--tracing',
    ],
    ['--quick', '--no-record', '--profile', '--help'],
  );
  if (args.has('--help')) return null;
  const quick = args.has('--quick');
  const compare = args.get('--compare');
  const toolArg = args.get('--tool');
  if (toolArg !== undefined && toolArg !== 'wrk' && toolArg !== 'autocannon') throw new Error(`--tool: expected wrk or autocannon, got ${String(toolArg)}`);
  const tool: Tool = toolArg ?? (wrkPath !== null ? 'wrk' : 'autocannon');
  const accessLog = args.get('--access-log') ?? 'on';
  if (accessLog !== 'on' && accessLog !== 'off' && accessLog !== 'file') throw new Error(`--access-log: expected on, off or file, got ${String(accessLog)}`);
  const names = SCENARIOS.map((s) => s.name);
  const servers = list('--servers', args.get('--servers'), Object.keys(SERVERS), Object.keys(SERVERS));
  return {
    scenarios: list('--scenario', args.get('--scenario'), names, compare === undefined ? names : ['hot']),
    servers,
    seconds: positive('--duration', args.get('--duration'), quick ? 2 : 10),
    warmSeconds: args.get('--warmup') === '0' ? 0 : positive('--warmup', args.get('--warmup'), quick ? 0.5 : 2),
    connections: Math.round(positive('--connections', args.get('--connections'), 100)),
    rounds: Math.round(positive('--rounds', args.get('--rounds'), quick ? 1 : 3)),
    tool,
    accessLog: accessLog !== 'off',
    accessLogTo: accessLog === 'file' ? 'file' : 'null',
    workers: Math.round(positive('--workers', args.get('--workers'), 1)),
    quick,
    // A smoke run's figures mean nothing: never recorded.
    record: !quick && !args.has('--no-record'),
    resultsDir: resolve(String(args.get('--results-dir') ?? resolve(ROOT, 'bench/results'))),
    compare: typeof compare === 'string' ? compare.split(',').filter(Boolean) : null,
    buildDir: args.get('--build-dir') === undefined ? null : resolve(String(args.get('--build-dir'))),
    profile: args.has('--profile'),
    profileServers: args.get('--servers') === undefined ? ['hypergate'] : servers,
    tracing: ratio('--tracing', args.get('--tracing')),
  };
}
