/**
 * autocannon as a child process on the load core, driven by the harness (bench/lib/load.ts):
 *   node --import tsx bench/drivers/autocannon.ts '<json job>'
 * Prints `HB_JSON <LoadResult>`. The list modes mirror bench/wrk/list.lua.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from '../lib/load.ts';

interface Job {
  readonly url: string;
  readonly spec: LoadSpec;
  readonly connections: number;
  readonly seconds: number;
}

const job = JSON.parse(process.argv[2] as string) as Job;
const { spec } = job;
const entries: { path: string; token: string }[] = [];
let random = false;
if (spec.list?.kind === 'file') {
  random = spec.list.random;
  for (const line of readFileSync(spec.list.file, 'utf8').split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) entries.push({ path: line.slice(0, sp), token: line.slice(sp + 1) });
  }
} else if (spec.list?.kind === 'ids') {
  random = true;
  for (let id = 1; id <= spec.list.count; id++) entries.push({ path: spec.list.prefix + id, token: spec.list.token });
}

let next = 0;
let wrapped = 0;
function pick(): { path: string; token: string } {
  if (random) return entries[Math.floor(Math.random() * entries.length)] as { path: string; token: string };
  if (next === entries.length) {
    next = 0;
    wrapped++;
  }
  return entries[next++] as { path: string; token: string };
}

const result = await autocannon({
  url: job.url + spec.path,
  connections: job.connections,
  duration: job.seconds,
  headers: { ...spec.headers },
  ...(entries.length === 0
    ? {}
    : {
        requests: [
          {
            setupRequest: (req: autocannon.Request) => {
              const { path, token } = pick();
              return { ...req, path, headers: { ...spec.headers, authorization: `Bearer ${token}` } };
            },
          },
        ],
      }),
});

const expected = spec.expect === 304 ? result['3xx'] : result['2xx'];
const answered = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
const out: LoadResult = {
  requests: result.requests.total,
  durationUs: Math.round(result.duration * 1e6),
  bytes: result.throughput.total,
  errors: result.errors + result.timeouts,
  badStatus: answered - expected,
  p50Us: Math.round(result.latency.p50 * 1000),
  p90Us: Math.round(result.latency.p90 * 1000),
  p99Us: Math.round(result.latency.p99 * 1000),
  maxUs: Math.round(result.latency.max * 1000),
  wrapped,
};
process.stdout.write(`HB_JSON ${JSON.stringify(out)}\n`);
