/**
 * The load generators, each run as a child on the load core: wrk (the ceiling figures need it:
 * autocannon saturates its own core near 30k-35k req/s) or autocannon (bench/drivers/autocannon.ts).
 * Both report the same LoadResult.
 */
import { existsSync } from 'node:fs';
import { collect, LOAD_CORE, nodeArgv, spawnPinned } from './proc.ts';

export type Tool = 'wrk' | 'autocannon';

const WRK = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((p) => existsSync(p)) ?? null;
export const wrkPath = WRK;

/** What to send. With `list`, each request takes its path and token from the list. */
export interface LoadSpec {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly list?:
    | { readonly kind: 'file'; readonly file: string; readonly random: boolean }
    | { readonly kind: 'ids'; readonly count: number; readonly prefix: string; readonly token: string; readonly seed: number };
  /** The status every answer must have. */
  readonly expect: 200 | 304;
}

export interface LoadResult {
  readonly requests: number;
  readonly durationUs: number;
  readonly bytes: number;
  /** Socket errors and time-outs. */
  readonly errors: number;
  /** Answers with another status than expected (wrk: any status >= 400). */
  readonly badStatus: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  /** Times the request list was used up and started again. */
  readonly wrapped: number;
  /** The mixed driver's counts (bench/drivers/mixed.ts); its latencies above are the reads'. */
  readonly mixed?: MixedCounts;
}

/** What the mixed load did: reads and PATCHes answered, reads served from cache, reads older than an acknowledged write. */
export interface MixedCounts {
  readonly reads: number;
  readonly writes: number;
  /** Reads whose Cache-Status said hit. */
  readonly cacheHits: number;
  /** Reads that carried an older version than a PATCH answered before they were sent: must be 0. */
  readonly staleReads: number;
  readonly writeP50Us: number;
  readonly writeP99Us: number;
}

interface WrkLine {
  requests: number;
  durationUs: number;
  bytes: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  statusErrors: number;
  timeouts: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
  wrapped: number;
}

export function parseMarked<T>(stdout: string, what: string): T {
  const line = stdout.split('\n').find((l) => l.startsWith('HB_JSON '));
  if (line === undefined) throw new Error(`${what} printed no result:\n${stdout}`);
  return JSON.parse(line.slice('HB_JSON '.length)) as T;
}

async function runWrk(url: string, spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult> {
  if (WRK === null) throw new Error('wrk is not installed (apt-get install wrk), use --tool autocannon');
  const headerArgs = Object.entries(spec.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const list = spec.list;
  const script = list === undefined ? 'bench/wrk/static.lua' : 'bench/wrk/list.lua';
  const scriptArgs =
    list === undefined
      ? []
      : list.kind === 'file'
        ? ['file', list.file, list.random ? 'random' : 'seq']
        : ['ids', String(list.count), list.prefix, list.token, String(list.seed)];
  // wrk takes whole seconds only.
  const argv = [
    WRK,
    '-t1',
    `-c${connections}`,
    `-d${Math.max(1, Math.round(seconds))}s`,
    '--timeout',
    '5s',
    '-s',
    script,
    ...headerArgs,
    url + spec.path,
    '--',
    ...scriptArgs,
  ];
  const out = await collect(spawnPinned(LOAD_CORE, argv, { stdio: ['ignore', 'pipe', 'pipe'] }), 'wrk', (seconds + 60) * 1000);
  const r = parseMarked<WrkLine>(out, 'wrk');
  return {
    requests: r.requests,
    durationUs: r.durationUs,
    bytes: r.bytes,
    errors: r.connectErrors + r.readErrors + r.writeErrors + r.timeouts,
    badStatus: r.statusErrors,
    p50Us: r.p50Us,
    p90Us: r.p90Us,
    p99Us: r.p99Us,
    maxUs: r.maxUs,
    wrapped: r.wrapped,
  };
}

async function runAutocannon(url: string, spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult> {
  const job = JSON.stringify({ url, spec, connections, seconds });
  const child = spawnPinned(LOAD_CORE, nodeArgv('bench/drivers/autocannon.ts', [job]), { stdio: ['ignore', 'pipe', 'pipe'] });
  return parseMarked<LoadResult>(await collect(child, 'autocannon', (seconds + 60) * 1000), 'autocannon');
}

export function runLoad(tool: Tool, url: string, spec: LoadSpec, connections: number, seconds: number): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(url, spec, connections, seconds) : runAutocannon(url, spec, connections, seconds);
}
