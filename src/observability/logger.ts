import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import sonicBoom from 'sonic-boom';
import type { LogLevel } from '../config/types.ts';
import { AccessLogWriter } from './access-log.ts';

export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Where access-log lines go; loggers without it log no access lines. */
  readonly accessLog?: AccessLogWriter;
  /** Changes the level at run time (SIGHUP reload). */
  setLevel?(level: LogLevel): void;
  /** Writes out anything buffered; call before process.exit. */
  flush?(): void;
}

/**
 * Values that must never reach a log, wherever a caller puts them. Defence in depth: no code path
 * logs headers or tokens, and a test checks the output of a whole session for them.
 */
const REDACT = ['authorization', 'token', 'headers.authorization', '*.authorization', '*.token'];

/**
 * The pino-backed logger: one JSON object per line on stdout (or `write`). Access lines skip pino:
 * their fields are fixed and known, so AccessLogWriter builds them by hand and hands the
 * destination batches (the hot path's largest saving; see access-log.ts).
 *
 * Writes are synchronous (pino's default). With asynchronous writes a line whose write(2) was
 * still queued in libuv's pool when process.exit ran was lost, and flushSync cannot reach it: the
 * shutdown test saw the "shutting down" line vanish under load. Other lines are rare (start-up,
 * warnings, 5xx) and access lines go out at most once per 64 KB or 100 ms, so sync costs little;
 * a slow reader of stdout then slows the gateway instead of growing its memory.
 */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const dest: DestinationStream & { flushSync?: () => void } =
    write === undefined ? pino.destination({ dest: 1, sync: true }) : { write };
  const main: Pino = pino({ level, redact: REDACT, base: { pid: process.pid } }, dest);
  // Access batches go to stdout through their own SonicBoom in buffer mode (pino's is for strings);
  // both write whole lines, so lines never interleave. A `write` callback (tests, embedding) gets
  // each line as it is logged, as from pino.
  const accessDest =
    write === undefined
      ? byteStdout((err) => {
          if (err.code !== 'EPIPE') main.error({ code: err.code ?? err.message }, 'cannot write the access log: access lines are dropped from now on');
        })
      : null;
  const access =
    accessDest === null
      ? new AccessLogWriter((chunk) => splitLines(chunk.toString('utf8'), write as (line: string) => void), 0)
      : new AccessLogWriter((chunk) => accessDest.write(chunk));
  access.enabled = level !== 'silent';
  return {
    debug: (msg, fields) => main.debug(fields ?? {}, msg),
    info: (msg, fields) => main.info(fields ?? {}, msg),
    warn: (msg, fields) => main.warn(fields ?? {}, msg),
    error: (msg, fields) => main.error(fields ?? {}, msg),
    accessLog: access,
    setLevel: (next) => {
      main.level = next;
      access.enabled = next !== 'silent';
    },
    flush: () => {
      access.flush();
      for (const stream of [accessDest, dest]) {
        try {
          stream?.flushSync?.();
        } catch {
          // Nothing was buffered, or stdout is gone: nothing left to save.
        }
      }
    },
  };
}

/** Bytes written as they are (sonic-boom's buffer mode), one more handle on stdout. */
interface ByteSink {
  write(chunk: Buffer): boolean;
  flushSync(): void;
  on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): unknown;
}

/**
 * A failed write is an 'error' event, thrown when nobody listens: with the reader of stdout gone
 * (EPIPE) the next batch took the process down. As pino does for its own destination, the sink
 * then stops writing; sonic-boom would otherwise keep every failed batch and retry it forever.
 */
function byteStdout(failed: (err: NodeJS.ErrnoException) => void): ByteSink {
  // sonic-boom's type definitions describe only its utf8 mode; in buffer mode write takes Buffers.
  const sink = new sonicBoom.SonicBoom({ fd: 1, sync: true, contentMode: 'buffer' }) as unknown as ByteSink;
  sink.on('error', (err) => {
    sink.write = () => true;
    sink.flushSync = noop;
    failed(err);
  });
  return sink;
}

/** A `write` callback gets one line per call, as pino gives it. */
function splitLines(chunk: string, write: (line: string) => void): void {
  let start = 0;
  for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
    write(chunk.slice(start, end + 1));
    start = end + 1;
  }
}

const noop = (): void => {};

/** Says nothing; the default for createGateway, so tests and benchmarks stay quiet. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
