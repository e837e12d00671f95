import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { unsentBytes } from '../lib/libuv-handle.ts';

/** Requests the connection is answering (pipelined requests overlap). */
const IN_FLIGHT = Symbol('hypergate.inFlight');
/** performance.now() when its last answer ended; Infinity before its first request (server.headersTimeoutMs covers that wait). */
const IDLE_SINCE = Symbol('hypergate.idleSince');
/** socket.bytesRead when it last became idle: more since means its next request has begun. */
const READ_AT_IDLE = Symbol('hypergate.readAtIdle');
/** performance.now() since when its pending output has not moved; Infinity while nothing is pending. */
const STALLED_SINCE = Symbol('hypergate.stalledSince');
/** socket.writableLength at the last sweep: less now means a write was completed. */
const PENDING_AT_SWEEP = Symbol('hypergate.pendingAtSweep');
/** The libuv write queue's size at the last sweep: another now means part of a write went out. */
const QUEUED_AT_SWEEP = Symbol('hypergate.queuedAtSweep');

interface TrackedSocket extends Socket {
  [IN_FLIGHT]: number;
  [IDLE_SINCE]: number;
  [READ_AT_IDLE]: number;
  [STALLED_SINCE]: number;
  [PENDING_AT_SWEEP]: number;
  [QUEUED_AT_SWEEP]: number;
}

/**
 * Requests of one connection that may wait for their answers (token checks, upstream fetches) at
 * once. node:http stops reading a connection only once an answer waits behind a full socket
 * buffer; until then every request that arrives is parsed and worked on, so a client that
 * pipelines thousands of misses at once and never reads would have every one fetched and its
 * answer kept in memory. Past this many, a request is refused and its connection closed after
 * the answers before it (HG_ERR_PIPELINE_TOO_DEEP, 503); RFC 9112 section 9.3.2 has clients send
 * what was not answered again on a new connection. Browsers do not pipeline; clients that do keep
 * a few requests in flight.
 */
export const MAX_PENDING_PER_CONNECTION = 32;

/**
 * A request arrived on the connection: it is not idle until the answer ends, however long that
 * takes. True when the connection now has more than MAX_PENDING_PER_CONNECTION requests waiting.
 */
export function markBusy(socket: Socket): boolean {
  const tracked = socket as TrackedSocket;
  // `| 0`: a socket no sweeper tracks (a dispatcher used on its own) starts from undefined.
  const pending = (tracked[IN_FLIGHT] | 0) + 1;
  tracked[IN_FLIGHT] = pending;
  return pending > MAX_PENDING_PER_CONNECTION;
}

/** An answer on the connection ended at `at` (performance.now()); idle once no other is pending. */
export function markIdle(socket: Socket, at: number): void {
  const tracked = socket as TrackedSocket;
  const left = (tracked[IN_FLIGHT] | 0) - 1;
  tracked[IN_FLIGHT] = left > 0 ? left : 0;
  if (left <= 0) {
    tracked[IDLE_SINCE] = at;
    tracked[READ_AT_IDLE] = socket.bytesRead;
  }
}

/** How often connections are looked at: a fifth of the shortest time-out, within 50 ms to 1 s. */
function sweepIntervalMs(timeouts: ConnectionTimeouts): number {
  const shortest = Math.min(timeouts.keepAliveMs || Number.POSITIVE_INFINITY, timeouts.sendMs || Number.POSITIVE_INFINITY);
  return Math.min(1000, Math.max(50, Math.floor(shortest / 5)));
}

export interface ConnectionTimeouts {
  /** server.keepAliveTimeoutMs: idle time before a kept-alive connection is closed; 0 never. */
  readonly keepAliveMs: number;
  /** server.sendTimeoutMs: time an answer may go without any of it being written before its connection is closed; 0 never. */
  readonly sendMs: number;
}

/**
 * server.keepAliveTimeoutMs and server.sendTimeoutMs, enforced by one sweep over the open
 * connections instead of per-request timers.
 *
 * Keep-alive, instead of Node's per-request timer. Node re-arms a socket timer twice per request
 * (when an answer ends and when the next request starts), each time a new Timeout, a bound
 * function and a timer-list insertion: ~0.35 µs a request, 4% of the `hot` throughput
 * (bench/RESULTS.md). Node core made the same trade for headersTimeout and requestTimeout
 * (connectionsCheckingInterval). Here the dispatcher marks a connection busy when a request
 * arrives and idle when its last pending answer ends (two property writes), and a sweep every
 * `sweepIntervalMs` closes connections idle for the time-out or longer: one is closed between
 * keepAliveMs and keepAliveMs + the interval after its last answer.
 *
 * Like Node's timer, it leaves alone a connection still writing an answer out to a slow reader and
 * one whose next request has begun to arrive (bytes read since it became idle; the head then has
 * server.headersTimeoutMs). Unlike it, no `Keep-Alive: timeout=…` hint is sent (it is not part of
 * HTTP/1.1, RFC 9112; clients close idle connections on their own clock, undici's default being 4 s).
 * keepAliveMs 0 keeps idle connections open, as Node's keepAliveTimeout 0 does.
 *
 * Send (nginx's send_timeout): a client that sends requests and never reads their answers would
 * hold its connection, and what the kernel and Node buffer for it, for ever. The same sweep looks
 * at each connection with output pending and closes it once that output has not moved for the
 * time-out: moving means part of a write reached the kernel (libuv's write queue changed) or a
 * write was completed (writableLength went down). A client that reads, however slowly, keeps it
 * moving; the time is between two moves, not for a whole answer, as nginx counts it. A connection
 * is closed between sendMs and sendMs + two intervals after its output last moved. Until then
 * the memory a never-reading client costs is bounded by Node: once an answer waits to be written
 * (the socket's writable buffer is past its high-water mark), Node stops reading the connection,
 * so no further pipelined request is parsed or answered (and MAX_PENDING_PER_CONNECTION bounds
 * the requests read before that).
 */
export class ConnectionSweeper {
  readonly #sockets = new Set<TrackedSocket>();
  #timeouts: ConnectionTimeouts = { keepAliveMs: 0, sendMs: 0 };
  #timer: NodeJS.Timeout | null = null;

  constructor(server: Server, timeouts: ConnectionTimeouts) {
    // Node's own keep-alive timer stays off: this sweep replaces it.
    server.keepAliveTimeout = 0;
    server.on('connection', (socket: Socket) => {
      const tracked = socket as TrackedSocket;
      tracked[IN_FLIGHT] = 0;
      tracked[IDLE_SINCE] = Number.POSITIVE_INFINITY;
      tracked[READ_AT_IDLE] = 0;
      tracked[STALLED_SINCE] = Number.POSITIVE_INFINITY;
      tracked[PENDING_AT_SWEEP] = 0;
      tracked[QUEUED_AT_SWEEP] = 0;
      this.#sockets.add(tracked);
      socket.once('close', () => this.#sockets.delete(tracked));
    });
    this.setTimeouts(timeouts);
  }

  /** Applies new time-outs (start, reload). */
  setTimeouts(timeouts: ConnectionTimeouts): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#timeouts = timeouts;
    if (timeouts.keepAliveMs > 0 || timeouts.sendMs > 0) this.#timer = setInterval(() => this.#sweep(performance.now()), sweepIntervalMs(timeouts)).unref();
  }

  /** Closes the connections idle, or with output stalled, for their time-out or longer at `now`. */
  #sweep(now: number): void {
    const { keepAliveMs, sendMs } = this.#timeouts;
    for (const socket of this.#sockets) {
      if (sendMs > 0 && this.#stalledFor(socket, now) >= sendMs) {
        socket.destroy();
        continue;
      }
      if (keepAliveMs === 0 || socket[IN_FLIGHT] !== 0 || now - socket[IDLE_SINCE] < keepAliveMs) continue;
      // An answer still going out to a slow reader (a cache hit counts as answered once end() has
      // queued it), or a next request whose head has begun (server.headersTimeoutMs covers that):
      // not idle yet. Its idle time starts again from now.
      if (socket.writableLength > 0 || socket.bytesRead !== socket[READ_AT_IDLE]) {
        socket[IDLE_SINCE] = now;
        socket[READ_AT_IDLE] = socket.bytesRead;
        continue;
      }
      socket.destroy();
    }
  }

  /** How long the connection's pending output has not moved at `now`; 0 when none is pending or it moved since the last sweep. */
  #stalledFor(socket: TrackedSocket, now: number): number {
    const pending = socket.writableLength;
    if (pending === 0) {
      socket[STALLED_SINCE] = Number.POSITIVE_INFINITY;
      return 0;
    }
    const queued = unsentBytes(socket);
    if (socket[STALLED_SINCE] === Number.POSITIVE_INFINITY || pending < socket[PENDING_AT_SWEEP] || queued !== socket[QUEUED_AT_SWEEP])
      socket[STALLED_SINCE] = now;
    socket[PENDING_AT_SWEEP] = pending;
    socket[QUEUED_AT_SWEEP] = queued;
    return now - socket[STALLED_SINCE];
  }

  stop(): void {
    this.setTimeouts({ keepAliveMs: 0, sendMs: 0 });
  }
}
