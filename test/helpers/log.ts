import { createLogger, type Logger } from '../../src/observability/logger.ts';

export interface CapturedLog {
  readonly logger: Logger;
  /** Every line as written. */
  readonly lines: string[];
  /** Every line parsed. */
  readonly records: () => Record<string, unknown>[];
}

/** A real logger (pino, the access-log writer) whose lines are kept in memory for the test to read. */
export function captureLog(level: 'info' | 'debug' = 'info'): CapturedLog {
  const lines: string[] = [];
  const logger = createLogger(level, (line) => lines.push(line));
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}
