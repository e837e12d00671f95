import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import type { LogLevel } from '../config/types.ts';

export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** One access-log line: what happened to one request (README "Operating hypergate"). */
export interface AccessLine {
  readonly reqId: string;
  readonly method: string | undefined;
  readonly path: string;
  readonly status: number;
  readonly bytes: number;
  /** Total time in the gateway, in ms. */
  readonly ms: number;
  /** Time waiting for the upstream, in ms; absent when the upstream was not asked. */
  readonly upstreamMs: number | undefined;
  /** hit, miss, collapsed, stale, bypass (not cacheable), or absent. */
  readonly cache: string | undefined;
  readonly sub: string | undefined;
}

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Writes an access-log line; loggers without it log no access lines. */
  access?(line: AccessLine): void;
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
 * The pino-backed logger: one JSON object per line on stdout (or `write`), written asynchronously
 * so a burst of access lines becomes a few write(2) calls instead of one per request. Access lines
 * go through their own pino instance without redaction: their fields are fixed and known.
 */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const dest: DestinationStream & { flushSync?: () => void } =
    write === undefined ? pino.destination({ dest: 1, sync: false }) : { write };
  const main: Pino = pino({ level, redact: REDACT, base: { pid: process.pid } }, dest);
  const access: Pino = pino({ level: level === 'silent' ? 'silent' : 'info', base: undefined }, dest);
  return {
    debug: (msg, fields) => main.debug(fields ?? {}, msg),
    info: (msg, fields) => main.info(fields ?? {}, msg),
    warn: (msg, fields) => main.warn(fields ?? {}, msg),
    error: (msg, fields) => main.error(fields ?? {}, msg),
    access: (line) => access.info(line, 'request'),
    setLevel: (next) => {
      main.level = next;
      access.level = next === 'silent' ? 'silent' : 'info';
    },
    flush: () => {
      try {
        dest.flushSync?.();
      } catch {
        // Nothing was buffered, or stdout is gone: nothing left to save.
      }
    },
  };
}

const noop = (): void => {};

/** Says nothing; the default for createGateway, so tests and benchmarks stay quiet. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
