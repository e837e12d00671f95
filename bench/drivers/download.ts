/**
 * Downloads: `connections` loops, each fetching the path again as soon as its last download has
 * ended, until the run's time is up (downloads under way then are finished and counted). Run as
 * a child on the load core by the harness:
 *   node --import tsx bench/drivers/download.ts '<json job>'
 * Prints `HB_JSON <LoadResult>`: `requests` the downloads, `bytes` all body bytes read, latencies
 * those of whole downloads; a download with another status or another length than `bytes` is
 * counted in `badStatus`, a socket error in `errors`.
 */
import { Agent, request } from 'node:http';
import type { LoadResult } from '../lib/load.ts';

interface Job {
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly seconds: number;
  readonly bytes: number;
}

const job = JSON.parse(process.argv[2] as string) as Job;
const agent = new Agent({ keepAlive: true, maxSockets: job.connections });
const latenciesUs: number[] = [];
let bytes = 0;
let errors = 0;
let badStatus = 0;

/** One download: its body is read and dropped as it comes, never held. */
function once(): Promise<void> {
  const started = process.hrtime.bigint();
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port: job.port, path: job.path, headers: job.headers, agent }, (res) => {
      let got = 0;
      res.on('data', (chunk: Buffer) => {
        got += chunk.length;
      });
      res.on('end', () => {
        bytes += got;
        if (res.statusCode !== 200 || got !== job.bytes) badStatus++;
        latenciesUs.push(Number((process.hrtime.bigint() - started) / 1000n));
        done();
      });
      res.on('error', () => {
        errors++;
        done();
      });
    });
    req.on('error', () => {
      errors++;
      done();
    });
    req.end();
  });
}

function at(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

const start = process.hrtime.bigint();
const endAt = start + BigInt(Math.round(job.seconds * 1e9));
await Promise.all(
  Array.from({ length: job.connections }, async () => {
    while (process.hrtime.bigint() < endAt && errors === 0) await once();
  }),
);
const durationUs = Number((process.hrtime.bigint() - start) / 1000n);
agent.destroy();
const sorted = [...latenciesUs].sort((a, b) => a - b);
const result: LoadResult = {
  requests: latenciesUs.length,
  durationUs,
  bytes,
  errors,
  badStatus,
  p50Us: at(sorted, 0.5),
  p90Us: at(sorted, 0.9),
  p99Us: at(sorted, 0.99),
  maxUs: sorted.at(-1) ?? 0,
  wrapped: 0,
};
process.stdout.write(`HB_JSON ${JSON.stringify(result)}\n`);
