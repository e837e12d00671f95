import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Requests the connection is answering (pipelined requests overlap). */
const IN_FLIGHT = Symbol('hypergate.inFlight');
/** performance.now() when its last answer ended; Infinity before its first request (server.headersTimeoutMs covers that wait). */
const IDLE_SINCE = Symbol('hypergate.idleSince');
/** socket.bytesRead when it last became idle: more since means its next request has begun. */
const READ_AT_IDLE = Symbol('hypergate.readAtIdle');

interface TrackedSocket extends Socket {
  [IN_FLIGHT]: number;
  [IDLE_SINCE]: number;
  [READ_AT_IDLE]: number;
}

/** A request arrived on the connection: it is not idle until the answer ends, however long that takes. */
export function markBusy(socket: Socket): void {
  const tracked = socket as TrackedSocket;
  // `| 0`: a socket no sweeper tracks (a dispatcher used on its own) starts from undefined.
  tracked[IN_FLIGHT] = (tracked[IN_FLIGHT] | 0) + 1;
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

/** How often idle connections are looked for: a fifth of the time-out, within 50 ms to 1 s. */
function sweepIntervalMs(timeoutMs: number): number {
  return Math.min(1000, Math.max(50, Math.floor(timeoutMs / 5)));
}

/**
 * server.keepAliveTimeoutMs, enforced by a sweep instead of Node's per-request timer. Node re-arms
 * a socket timer twice per request (when an answer ends and when the next request starts), each
 * time a new Timeout, a bound function and a timer-list insertion: ~0.35 µs a request, 4% of the
 * `hot` throughput (bench/RESULTS.md). Node core made the same trade for headersTimeout and
 * requestTimeout (connectionsCheckingInterval). Here the dispatcher marks a connection busy when a
 * request arrives and idle when its last pending answer ends (two property writes), and a sweep every
 * `sweepIntervalMs` closes connections idle for the time-out or longer: one is closed between
 * timeoutMs and timeoutMs + the interval after its last answer.
 *
 * Like Node's timer, it leaves alone a connection still writing an answer out to a slow reader and
 * one whose next request has begun to arrive (bytes read since it became idle; the head then has
 * server.headersTimeoutMs). Unlike it, no `Keep-Alive: timeout=…` hint is sent (it is not part of
 * HTTP/1.1, RFC 9112; clients close idle connections on their own clock, undici's default being 4 s).
 * timeoutMs 0 keeps idle connections open, as Node's keepAliveTimeout 0 does.
 */
export class KeepAliveSweeper {
  readonly #sockets = new Set<TrackedSocket>();
  #timeoutMs = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(server: Server, timeoutMs: number) {
    // Node's own keep-alive timer stays off: this sweep replaces it.
    server.keepAliveTimeout = 0;
    server.on('connection', (socket: Socket) => {
      const tracked = socket as TrackedSocket;
      tracked[IN_FLIGHT] = 0;
      tracked[IDLE_SINCE] = Number.POSITIVE_INFINITY;
      tracked[READ_AT_IDLE] = 0;
      this.#sockets.add(tracked);
      socket.once('close', () => this.#sockets.delete(tracked));
    });
    this.setTimeout(timeoutMs);
  }

  /** Applies a new server.keepAliveTimeoutMs (reload). */
  setTimeout(timeoutMs: number): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#timeoutMs = timeoutMs;
    if (timeoutMs > 0) this.#timer = setInterval(() => this.#sweep(performance.now()), sweepIntervalMs(timeoutMs)).unref();
  }

  /** Closes the connections idle for the time-out or longer at `now`. */
  #sweep(now: number): void {
    for (const socket of this.#sockets) {
      if (socket[IN_FLIGHT] !== 0 || now - socket[IDLE_SINCE] < this.#timeoutMs) continue;
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

  stop(): void {
    this.setTimeout(0);
  }
}
