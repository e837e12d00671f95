import { fstatSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { isatty, WriteStream } from 'node:tty';
import type { Writable } from 'node:stream';
import { makeNonBlocking } from '../lib/libuv-handle.ts';

/** log.maxBufferBytes by default: what waits for a slow reader of stdout before lines are dropped. */
export const DEFAULT_LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * PIPE_BUF: a write to a pipe of at most this many bytes is never interleaved with other
 * processes' writes (POSIX write(2); on a non-blocking pipe it is written whole or not at all).
 * 4096 on Linux; 512 is all POSIX promises elsewhere.
 */
export const PIPE_BUF = process.platform === 'linux' ? 4096 : 512;

export interface StdoutSinkOptions {
  /** Most bytes waiting for the reader; a chunk that would go past it is dropped. */
  readonly maxBytes: number;
  /**
   * Other processes write to the same stdout (a cluster's primary and workers): each write(2)
   * then carries whole lines and at most PIPE_BUF bytes, so lines never interleave.
   */
  readonly shared: boolean;
}

/**
 * Where log lines go: stdout, written without ever blocking the event loop on a slow reader.
 *
 * A pipe (or socket) gets a libuv stream of its own: each write is tried at once (one write(2), as
 * a synchronous write was), and what the pipe does not take waits until epoll says the reader has
 * made room. A TTY gets the same (Node makes terminals blocking; a terminal stopped with Ctrl-S
 * would then stop the gateway), and a file, which never makes a writer wait for a reader, is
 * written synchronously.
 *
 * What waits is bounded by `maxBytes`: a chunk that would take it past the bound is dropped and
 * its lines counted (`dropped`, /metrics), so a stalled reader costs the gateway at most that much
 * memory and never a request. Once everything waiting has been written the reader is back:
 * `recovered` is told how many lines were lost since it was last told (one warning line).
 *
 * Chunks go to the stream one at a time, so each is its own write(2) (the stream would join
 * queued ones into one writev, which a shared pipe may interleave with other writers'), and while
 * the fd takes them at once they are all written within write(), as synchronous writes were.
 *
 * Lines waiting at process.exit would be lost, so the exit path waits for them (`drained`),
 * bounded; an exit that cannot wait gets what the fd takes at once.
 */
export class StdoutSink {
  readonly #stream: Writable | null;
  readonly #fd: number;
  readonly #maxBytes: number;
  readonly #pieceBytes: number;
  /** Chunks waiting, from #head on (the array is compacted now and then, not shifted each time). */
  #queue: Buffer[] = [];
  #head = 0;
  /** Bytes in the queue and in the write under way. */
  #queuedBytes = 0;
  /** The chunk the stream is writing (the fd did not take it at once); null when none is. */
  #inFlight: Buffer | null = null;
  #failed = false;
  #dropped = 0;
  #unreported = 0;
  #waiters: Array<() => void> = [];
  /** Told, once everything waiting is written, how many lines were dropped since it was last told. */
  recovered: (dropped: number) => void = () => {};
  /** Writes that completed within write() whose callbacks have not come yet (they come in order). */
  #writtenAtOnce = 0;
  readonly #written = (err?: Error | null): void => {
    if (this.#writtenAtOnce > 0) {
      this.#writtenAtOnce--;
      return;
    }
    this.#queuedBytes -= this.#inFlight?.length ?? 0;
    this.#inFlight = null;
    if (err != null) this.#fail();
    else this.#next();
  };

  constructor(fd: number, options: StdoutSinkOptions) {
    this.#fd = fd;
    this.#maxBytes = options.maxBytes;
    this.#pieceBytes = options.shared ? PIPE_BUF : Number.POSITIVE_INFINITY;
    this.#stream = openStream(fd);
    // A failed write (EPIPE: the reader has gone) is an 'error' event, fatal when nobody listens.
    this.#stream?.on('error', () => this.#fail());
  }

  /** Lines dropped since start: the queue was full, or stdout failed. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Hands whole lines to stdout, or drops them when what waits is past the bound. */
  write(chunk: Buffer | string): void {
    if (this.#failed) {
      this.#dropped += linesIn(chunk);
      return;
    }
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.#stream === null) {
      this.#writeFile(bytes);
      return;
    }
    // An empty queue takes any chunk, so a line longer than the bound is still written.
    if (this.#queuedBytes > 0 && this.#queuedBytes + bytes.length > this.#maxBytes) {
      const lines = linesIn(bytes);
      this.#dropped += lines;
      this.#unreported += lines;
      return;
    }
    this.#queuedBytes += bytes.length;
    if (bytes.length <= this.#pieceBytes) this.#queue.push(bytes);
    else splitLines(bytes, this.#pieceBytes, this.#queue);
    if (this.#inFlight === null) this.#next();
  }

  /** Resolves once everything handed over is written (or stdout failed), or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.#queuedBytes === 0 || this.#failed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #take(): Buffer | undefined {
    const piece = this.#queue[this.#head];
    if (piece === undefined) {
      this.#queue.length = 0;
      this.#head = 0;
      return undefined;
    }
    this.#head++;
    if (this.#head >= 1024) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return piece;
  }

  /**
   * Writes what waits, one chunk after the other, for as long as the fd takes each at once (the
   * stream then has nothing left of it); a chunk the fd did not take whole is waited for.
   */
  #next(): void {
    const stream = this.#stream as Writable;
    for (let piece = this.#take(); piece !== undefined; piece = this.#take()) {
      stream.write(piece, this.#written);
      if (stream.writableLength > 0) {
        this.#inFlight = piece;
        return;
      }
      // Written already; its callback still comes, on the next tick, and is passed over.
      this.#queuedBytes -= piece.length;
      this.#writtenAtOnce++;
    }
    if (this.#unreported > 0) {
      const dropped = this.#unreported;
      this.#unreported = 0;
      this.recovered(dropped);
      // The warning is written like any line (the call above wrote what it could of it): an exit waits for it too.
      if (this.#queuedBytes > 0) return;
    }
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Nothing can be written any more: what waits is lost, and lines are dropped from now on. */
  #fail(): void {
    if (this.#failed) return;
    this.#failed = true;
    if (this.#inFlight !== null) this.#dropped += linesIn(this.#inFlight);
    this.#inFlight = null;
    for (let piece = this.#take(); piece !== undefined; piece = this.#take()) this.#dropped += linesIn(piece);
    this.#queuedBytes = 0;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }

  #writeFile(bytes: Buffer): void {
    try {
      for (let at = 0; at < bytes.length;) at += writeSync(this.#fd, bytes, at);
    } catch {
      // ENOSPC, EIO: the file cannot take them; counted, never retried.
      this.#dropped += linesIn(bytes);
    }
  }
}

/** Lines in a chunk of whole lines: counted only when they are dropped, never on the way out. */
function linesIn(chunk: Buffer | string): number {
  let lines = 0;
  for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) lines++;
  return lines;
}

/** Cuts a chunk of whole lines into pieces of whole lines of at most `most` bytes (a longer line is a piece of its own). */
function splitLines(bytes: Buffer, most: number, into: Buffer[]): void {
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.length;
    if (end - start > most) {
      const last = bytes.lastIndexOf(0x0a, start + most - 1);
      if (last >= start) end = last + 1;
      else {
        const next = bytes.indexOf(0x0a, start + most);
        if (next !== -1) end = next + 1;
      }
    }
    into.push(bytes.subarray(start, end));
    start = end;
  }
}

/**
 * A non-blocking libuv stream for a pipe, socket or terminal on `fd`; null for a file or any other
 * device, which is written synchronously. unref'd: pending log lines never keep the process alive
 * (every exit path waits for them itself).
 */
function openStream(fd: number): Writable | null {
  let kind: 'file' | 'pipe' | 'tty';
  try {
    const stat = fstatSync(fd);
    kind = stat.isFIFO() || stat.isSocket() ? 'pipe' : isatty(fd) ? 'tty' : 'file';
  } catch {
    kind = 'file'; // a closed fd: every write fails and is counted
  }
  if (kind === 'file') return null;
  if (kind === 'pipe') return new Socket({ fd, readable: false, writable: true }).unref();
  const tty = new WriteStream(fd);
  // libuv opened the terminal anew, so making it non-blocking again affects no other process
  // sharing the terminal.
  makeNonBlocking(tty);
  return tty.unref();
}
