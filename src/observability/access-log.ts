import { performance } from 'node:perf_hooks';
import { bytesOf, jsonStringBound, putAscii, putBytes, putJsonSlice, putJsonString, putMillis, putUint } from './json-bytes.ts';

/** A batch is written out once it reaches this many bytes, without waiting for the delay. */
const FLUSH_AT_BYTES = 64 * 1024;
/** Room past FLUSH_AT_BYTES for the line that crosses it (a longer line is written on its own). */
const SLACK_BYTES = 16 * 1024;
/** Room for a line's constant pieces, numbers and worker id; its text fields are added to it. */
const FIXED_BYTES = 384;

const HEAD = '{"level":30,"time":';
const MSG_REQ_ID = ',"msg":"request","reqId":"';
const METHOD = bytesOf(',"method":"');
const PATH = bytesOf(',"path":');
const QUERY = bytesOf(',"query":');
const STATUS = bytesOf(',"status":');
const BYTES = bytesOf(',"bytes":');
const MS = bytesOf(',"ms":');
const UPSTREAM_MS = bytesOf(',"upstreamMs":');
const CACHE = bytesOf(',"cache":"');
const SUB = bytesOf(',"sub":');
const CLIENT = bytesOf(',"client":');
const USER_AGENT = bytesOf(',"userAgent":');
const EMBED = bytesOf(',"embed":');
const QUOTE = 0x22;

/** How late an access line may reach stdout: one write per this many ms at most, under load. */
export const ACCESS_LOG_MAX_DELAY_MS = 100;

/**
 * Access lines, written as bytes by hand and in batches. pino serialises an object per call and its
 * destination does a bookkeeping pass per write: ~3.9 µs a line on the hot path. A line built as
 * a string cost ~0.6 µs, most of it in making, flattening and copying its dozen intermediate
 * strings; each line is now written field by field into one byte buffer (json-bytes.ts), with no
 * allocation (bench/RESULTS.md, "access log"). The output is the same shape as pino's:
 * `{"level":30,"time":…,"msg":"request",…}` on one line, so log tooling sees no difference.
 *
 * `time` is the request's end on the monotonic clock plus an offset to the wall clock, read again
 * at the first line of every batch (a batch spans at most 100 ms), instead of a Date.now() per line.
 *
 * Lines are handed to `sink` when 64 KB are pending or `maxDelayMs` after the first one (0: each
 * line at once, for a caller's own `write`), so a burst of requests costs one write(2).
 * `flush()` writes what is pending at once (before exit).
 */
export class AccessLogWriter {
  readonly #sink: (chunk: Buffer) => void;
  readonly #maxDelayMs: number;
  #pending = Buffer.allocUnsafe(FLUSH_AT_BYTES + SLACK_BYTES);
  #used = 0;
  #scheduled = false;
  /** Date.now() − performance.now(), read again at each batch. */
  #wallOffset = Date.now() - performance.now();
  /** The line's end: the worker id (a constant of the process) and the newline. */
  readonly #close: Uint8Array;
  /** The line's opening up to the request id, for the millisecond #headTime (most lines share one). */
  #head: Uint8Array = new Uint8Array(0);
  #headTime = -1;
  enabled = true;
  readonly #flushSoon = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  /** `workerId`: the cluster worker's id, in every line; none in a single process. */
  constructor(sink: (chunk: Buffer) => void, maxDelayMs = ACCESS_LOG_MAX_DELAY_MS, workerId?: number) {
    this.#sink = sink;
    this.#maxDelayMs = maxDelayMs;
    this.#close = bytesOf(workerId === undefined ? '}\n' : `,"worker":${workerId}}\n`);
  }

  /**
   * One line for one finished request. `endedAt` is performance.now() when it finished (the line's
   * time); `upstreamMs` < 0 and `cache` '' are left out, as is an undefined method, sub, client or
   * userAgent, and an empty query and `embed` (an assembled answer's Embed-Status). `url` is the request target: its path and its query (after `?`)
   * are written as two fields, straight from it. `reqId` is a safe token (request-id.ts), `method`
   * an HTTP token from llhttp and `cache` one of our own words: they are copied as they are. The
   * rest comes from the client (the client address from X-Forwarded-For, with server.trustProxy)
   * and is escaped.
   */
  write(
    reqId: string,
    method: string | undefined,
    url: string,
    status: number,
    bytes: number,
    ms: number,
    upstreamMs: number,
    cache: string,
    sub: string | undefined,
    client: string | undefined,
    userAgent: string | undefined,
    endedAt: number,
    embed = '',
  ): void {
    if (!this.enabled) return;
    const bound =
      FIXED_BYTES +
      reqId.length +
      (method?.length ?? 0) +
      cache.length +
      jsonStringBound(url) +
      (sub === undefined ? 0 : jsonStringBound(sub)) +
      (client === undefined ? 0 : jsonStringBound(client)) +
      (userAgent === undefined ? 0 : jsonStringBound(userAgent)) +
      (embed === '' ? 0 : jsonStringBound(embed));
    if (this.#used + bound > this.#pending.length) this.flush();
    // The first line of a batch reads the wall clock again: it may have been stepped while idle.
    if (this.#used === 0) this.#wallOffset = Date.now() - performance.now();
    // A line longer than a batch (a path of many KB) gets a buffer of its own.
    const own = bound > this.#pending.length;
    const buf = own ? Buffer.allocUnsafe(bound) : this.#pending;
    let at = own ? 0 : this.#used;
    const time = Math.round(this.#wallOffset + endedAt);
    if (time !== this.#headTime) {
      this.#headTime = time;
      this.#head = bytesOf(`${HEAD}${time}${MSG_REQ_ID}`);
    }
    at = putBytes(buf, at, this.#head);
    at = putAscii(buf, at, reqId);
    buf[at++] = QUOTE;
    if (method !== undefined) {
      at = putBytes(buf, at, METHOD);
      at = putAscii(buf, at, method);
      buf[at++] = QUOTE;
    }
    const q = url.indexOf('?');
    at = putBytes(buf, at, PATH);
    at = putJsonSlice(buf, at, url, 0, q === -1 ? url.length : q);
    if (q !== -1 && q + 1 < url.length) {
      at = putBytes(buf, at, QUERY);
      at = putJsonSlice(buf, at, url, q + 1, url.length);
    }
    at = putBytes(buf, at, STATUS);
    at = putUint(buf, at, status);
    at = putBytes(buf, at, BYTES);
    at = putUint(buf, at, bytes);
    at = putBytes(buf, at, MS);
    at = putMillis(buf, at, ms);
    if (upstreamMs >= 0) {
      at = putBytes(buf, at, UPSTREAM_MS);
      at = putMillis(buf, at, upstreamMs);
    }
    if (cache !== '') {
      at = putBytes(buf, at, CACHE);
      at = putAscii(buf, at, cache);
      buf[at++] = QUOTE;
    }
    if (sub !== undefined) {
      at = putBytes(buf, at, SUB);
      at = putJsonString(buf, at, sub);
    }
    if (client !== undefined) {
      at = putBytes(buf, at, CLIENT);
      at = putJsonString(buf, at, client);
    }
    if (userAgent !== undefined) {
      at = putBytes(buf, at, USER_AGENT);
      at = putJsonString(buf, at, userAgent);
    }
    if (embed !== '') {
      at = putBytes(buf, at, EMBED);
      at = putJsonString(buf, at, embed);
    }
    at = putBytes(buf, at, this.#close);
    if (own) {
      this.#sink(buf.subarray(0, at));
      return;
    }
    this.#used = at;
    if (this.#used >= FLUSH_AT_BYTES || this.#maxDelayMs === 0) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      // unref: pending lines never keep the process alive; every exit path calls flush().
      setTimeout(this.#flushSoon, this.#maxDelayMs).unref();
    }
  }

  flush(): void {
    if (this.#used === 0) return;
    // The sink may hold on to the chunk (an asynchronous write), so the next lines go to a new buffer.
    const chunk = this.#pending.subarray(0, this.#used);
    this.#pending = Buffer.allocUnsafe(this.#pending.length);
    this.#used = 0;
    this.#sink(chunk);
  }
}
