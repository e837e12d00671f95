import { pino, type Logger as Pino } from 'pino';
import type { LogLevel } from '../config/types.ts';
import { AccessLogWriter } from './access-log.ts';
import { DEFAULT_LOG_BUFFER_BYTES, StdoutSink } from './stdout-sink.ts';

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
  /**
   * Hands anything batched to stdout now, without waiting: what the fd takes at once is written
   * (the last resort of an exit that cannot wait, such as an uncaught exception).
   */
  flush?(): void;
  /** flush(), then resolves once every line is written, or after `timeoutMs` (a stalled reader). */
  drain?(timeoutMs: number): Promise<void>;
  /** Lines dropped because stdout's reader fell behind by more than log.maxBufferBytes, or was gone. */
  droppedLines?(): number;
}

export interface LoggerOptions {
  /** log.maxBufferBytes: most bytes waiting for stdout's reader before lines are dropped. */
  readonly maxBufferBytes?: number;
  /** Other processes write to the same stdout (a cluster): lines are written so they never interleave. */
  readonly sharedStdout?: boolean;
  /** The cluster worker's id, in every line as `worker`; none in a single process or the primary. */
  readonly workerId?: number;
}

/**
 * Values that must never reach a log, wherever a caller puts them. Defence in depth: no code path
 * logs headers or tokens, and a test checks the output of a whole session for them.
 */
const REDACT = ['authorization', 'token', 'headers.authorization', '*.authorization', '*.token'];

/**
 * The pino-backed logger: one JSON object per line on stdout (or `write`). Access lines skip pino:
 * their fields are fixed and known, so AccessLogWriter builds them by hand and hands the sink
 * batches (the hot path's largest saving; see access-log.ts).
 *
 * Both go through one StdoutSink, which never blocks: a reader of stdout that stalls makes lines
 * wait in a bounded queue, then drops and counts them, and serving goes on (see stdout-sink.ts).
 * Lines are written whole, so they never interleave. A `write` callback (tests, embedding) gets
 * each line as it is logged, as from pino.
 */
export function createLogger(level: LogLevel, write?: (line: string) => void, options: LoggerOptions = {}): Logger {
  const sink =
    write === undefined ? new StdoutSink(1, { maxBytes: options.maxBufferBytes ?? DEFAULT_LOG_BUFFER_BYTES, shared: options.sharedStdout === true }) : null;
  const base = options.workerId === undefined ? { pid: process.pid } : { pid: process.pid, worker: options.workerId };
  const main: Pino = pino(
    { level, redact: REDACT, base },
    sink === null ? { write: write as (line: string) => void } : { write: (line: string) => sink.write(line) },
  );
  const access =
    sink === null
      ? new AccessLogWriter((chunk) => splitLines(chunk.toString('utf8'), write as (line: string) => void), 0, options.workerId)
      : new AccessLogWriter((chunk) => sink.write(chunk), undefined, options.workerId);
  access.enabled = level !== 'silent';
  if (sink !== null) {
    sink.recovered = (dropped) =>
      main.warn({ event: 'log-dropped', dropped }, `${dropped} log lines were dropped: the reader of stdout fell behind by more than log.maxBufferBytes`);
  }
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
    flush: () => access.flush(),
    drain: (timeoutMs) => {
      access.flush();
      return sink === null ? Promise.resolve() : sink.drained(timeoutMs);
    },
    droppedLines: () => sink?.dropped ?? 0,
  };
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
