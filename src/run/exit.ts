import type { Logger } from '../observability/logger.ts';

/**
 * How long an exit waits for its last log lines to reach stdout's reader. Long enough for any
 * live reader to take log.maxBufferBytes; a reader that has stalled is not waited for longer.
 */
export const EXIT_LOG_WAIT_MS = 2000;

/**
 * Ends the process once the lines logged so far are written (bounded by EXIT_LOG_WAIT_MS).
 * process.exit drops what still waits in the stdout stream's queue, so every deliberate exit
 * comes through here.
 */
export async function exitAfterLogs(logger: Logger, code: number): Promise<never> {
  await logger.drain?.(EXIT_LOG_WAIT_MS);
  process.exit(code);
}

/** A start-up failure: what the fd takes at once is written, then the reasons go to stderr. */
export function die(lines: readonly string[], logger?: Logger): never {
  logger?.flush?.();
  for (const line of lines) process.stderr.write(`hypergate: ${line}\n`);
  process.exit(1);
}
