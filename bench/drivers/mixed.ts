/**
 * The mixed load: reads of a hot set of customers with a share of merge PATCHes spread over the
 * same set, on keep-alive connections each carrying one request at a time. Run as a child on the
 * load core by the harness:
 *   node --import tsx bench/drivers/mixed.ts '<json job>'
 * Prints `HB_JSON <LoadResult>` with its `mixed` counts. Raw sockets rather than an HTTP client
 * library, so the driver's own ceiling stays well above the server's (undici tops out near 20k
 * requests/s on one core).
 *
 * Staleness: each customer's version is the upstream's ("v<n>" inside our derived ETag). A PATCH
 * answered 200 makes its version the floor for that customer; a read sent after that answer
 * arrived must carry at least the floor. A read that carries less is counted as stale.
 */
import { connect, type Socket } from 'node:net';
import type { LoadResult, MixedCounts } from '../lib/load.ts';

export interface MixedJob {
  readonly port: number;
  readonly token: string;
  /** Customers 1..hotSet. */
  readonly hotSet: number;
  /** Share of requests that are PATCHes (0..1). */
  readonly writeShare: number;
  readonly connections: number;
  readonly seconds: number;
}

const job = JSON.parse(process.argv[2] as string) as MixedJob;
const PREFIX = '/api/customers/';
const host = `Host: 127.0.0.1:${job.port}\r\nAccept: application/json\r\nAuthorization: Bearer ${job.token}\r\n`;
const readBytes = Array.from({ length: job.hotSet + 1 }, (_, id) => Buffer.from(`GET ${PREFIX}${id} HTTP/1.1\r\n${host}\r\n`));
function patchBytes(id: number, revision: number): Buffer {
  const body = JSON.stringify({ name: `Customer ${id} rev ${revision}` });
  return Buffer.from(
    `PATCH ${PREFIX}${id} HTTP/1.1\r\n${host}Content-Type: application/merge-patch+json\r\nIf-Match: *\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The highest version a PATCH answer has acknowledged, per customer. */
const floor = new Uint32Array(job.hotSet + 1);
const counts = { reads: 0, writes: 0, hits: 0, stale: 0, writeUs: [] as number[] };
const readUs: number[] = [];
let errors = 0;
let badStatus = 0;
let revision = 0;
let firstBad = '';

// A small deterministic generator (mulberry32): every run sends the same mix in the same order per lane.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function header(head: string, name: string): string | undefined {
  const at = head.indexOf(`\r\n${name}:`);
  if (at === -1) return undefined;
  const end = head.indexOf('\r\n', at + 2);
  return head.slice(at + name.length + 3, end === -1 ? undefined : end).trim();
}

function versionOf(etag: string | undefined): number {
  const m = etag === undefined ? null : /^(?:W\/)?"v(\d+)\./.exec(etag);
  if (m === null) throw new Error(`an answer without a derived ETag of a "v<n>" upstream version: ${String(etag)}`);
  return Number(m[1]);
}

function bad(what: string): void {
  badStatus++;
  if (firstBad === '') firstBad = what;
}

/** One connection: sends its next request as soon as the previous answer is complete, until `endAt`. */
function lane(socket: Socket, seed: number, endAt: bigint): Promise<void> {
  const random = rng(seed);
  return new Promise((done) => {
    let buf: Buffer = Buffer.alloc(0);
    let pending: { write: boolean; id: number; floor: number; at: bigint } = { write: false, id: 0, floor: 0, at: 0n };
    const next = (): void => {
      if (process.hrtime.bigint() >= endAt) {
        socket.end();
        done();
        return;
      }
      const id = 1 + Math.floor(random() * job.hotSet);
      const write = random() < job.writeShare;
      pending = { write, id, floor: floor[id] as number, at: process.hrtime.bigint() };
      socket.write(write ? patchBytes(id, ++revision) : (readBytes[id] as Buffer));
    };
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buf.subarray(0, end).toString('latin1').toLowerCase();
      const length = Number(header(head, 'content-length') ?? Number.NaN);
      if (!Number.isFinite(length)) {
        errors++;
        socket.destroy();
        done();
        return;
      }
      if (buf.length < end + 4 + length) return;
      buf = buf.subarray(end + 4 + length);
      const us = Number(process.hrtime.bigint() - pending.at) / 1000;
      const status = Number(head.slice(9, 12));
      if (pending.write) {
        counts.writes++;
        counts.writeUs.push(us);
        if (status !== 200) bad(`PATCH ${PREFIX}${pending.id} answered ${status}`);
        else floor[pending.id] = Math.max(floor[pending.id] as number, versionOf(header(head, 'etag')));
      } else {
        counts.reads++;
        readUs.push(us);
        if (status !== 200) bad(`GET ${PREFIX}${pending.id} answered ${status}`);
        else {
          if (versionOf(header(head, 'etag')) < pending.floor) counts.stale++;
          if (/; hit(;|$)/.test(header(head, 'cache-status') ?? '')) counts.hits++;
        }
      }
      next();
    });
    socket.once('error', () => {
      errors++;
      done();
    });
    next();
  });
}

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(job.port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

const DEADLINE_MS = (job.seconds + 30) * 1000;
const timer = setTimeout(() => {
  process.stderr.write(`mixed: no end within ${DEADLINE_MS} ms\n`);
  process.exit(1);
}, DEADLINE_MS);
const sockets = await Promise.all(Array.from({ length: job.connections }, open));
const start = process.hrtime.bigint();
const endAt = start + BigInt(Math.round(job.seconds * 1e9));
await Promise.all(sockets.map((s, i) => lane(s, i + 1, endAt)));
const durationUs = Math.round(Number(process.hrtime.bigint() - start) / 1000);
clearTimeout(timer);
for (const s of sockets) s.destroy();
if (firstBad !== '') process.stderr.write(`mixed: first unexpected answer: ${firstBad}\n`);

const pct = (sorted: readonly number[], p: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
readUs.sort((a, b) => a - b);
counts.writeUs.sort((a, b) => a - b);
const mixed: MixedCounts = {
  reads: counts.reads,
  writes: counts.writes,
  cacheHits: counts.hits,
  staleReads: counts.stale,
  writeP50Us: pct(counts.writeUs, 50),
  writeP99Us: pct(counts.writeUs, 99),
};
const out: LoadResult = {
  requests: counts.reads + counts.writes,
  durationUs,
  bytes: 0,
  errors,
  badStatus,
  p50Us: pct(readUs, 50),
  p90Us: pct(readUs, 90),
  p99Us: pct(readUs, 99),
  maxUs: Math.round(readUs[readUs.length - 1] ?? 0),
  wrapped: 0,
  mixed,
};
process.stdout.write(`HB_JSON ${JSON.stringify(out)}\n`);
