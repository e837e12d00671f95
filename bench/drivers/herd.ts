/**
 * The herd: N connections opened first, then one request written on each in a single loop, so
 * they reach the server at once. Run as a child on the load core by the harness:
 *   node --import tsx bench/drivers/herd.ts '<json job>'
 * Prints `HB_JSON <LoadResult>` (latency of each request from its own write; duration from the
 * first write to the last answer). Bounded: gives up after 30 s.
 */
import { connect, type Socket } from 'node:net';
import type { LoadResult } from '../lib/load.ts';

interface Job {
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly expect: number;
}

const job = JSON.parse(process.argv[2] as string) as Job;
const BATCH = 200; // below node's default listen backlog (511), so no SYN is dropped and retried
const DEADLINE_MS = 30_000;

function open(): Promise<Socket> {
  return new Promise((done, fail) => {
    const socket = connect(job.port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.once('connect', () => done(socket));
    socket.once('error', fail);
  });
}

/** Resolves with the status once a whole answer (head + Content-Length body) has arrived. */
function answer(socket: Socket): Promise<number> {
  return new Promise((done, fail) => {
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buf.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length >= end + 4 + length) done(Number(head.slice(9, 12)));
    });
    socket.once('error', fail);
    socket.once('close', () => fail(new Error('closed before a whole answer')));
  });
}

const sockets: Socket[] = [];
const timer = setTimeout(() => {
  process.stderr.write(`herd: no end within ${DEADLINE_MS} ms\n`);
  process.exit(1);
}, DEADLINE_MS);
while (sockets.length < job.connections) {
  const batch = Math.min(BATCH, job.connections - sockets.length);
  sockets.push(...(await Promise.all(Array.from({ length: batch }, open))));
}
const head = Object.entries(job.headers)
  .map(([k, v]) => `${k}: ${v}\r\n`)
  .join('');
const bytes = Buffer.from(`GET ${job.path} HTTP/1.1\r\nHost: 127.0.0.1:${job.port}\r\n${head}\r\n`);
const answers = sockets.map((s) =>
  answer(s).then(
    (status) => ({ status, at: process.hrtime.bigint() }),
    () => ({ status: 0, at: process.hrtime.bigint() }),
  ),
);
const sentAt: bigint[] = [];
for (const s of sockets) {
  sentAt.push(process.hrtime.bigint());
  s.write(bytes);
}
const results = await Promise.all(answers);
clearTimeout(timer);
for (const s of sockets) s.destroy();

const latencies = results.map((r, i) => Number(r.at - (sentAt[i] as bigint)) / 1000).sort((a, b) => a - b);
const pct = (p: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0);
const last = results.reduce((m, r) => (r.at > m ? r.at : m), 0n);
const out: LoadResult = {
  requests: results.length,
  durationUs: Math.round(Number(last - (sentAt[0] as bigint)) / 1000),
  bytes: 0,
  errors: results.filter((r) => r.status === 0).length,
  badStatus: results.filter((r) => r.status !== 0 && r.status !== job.expect).length,
  p50Us: pct(50),
  p90Us: pct(90),
  p99Us: pct(99),
  maxUs: Math.round(latencies[latencies.length - 1] ?? 0),
  wrapped: 0,
};
process.stdout.write(`HB_JSON ${JSON.stringify(out)}\n`);
