import type { Logger } from '../observability/logger.ts';

/**
 * How long an exit waits for its last log lines to reach stdout's reader. Long enough for any
 * live reader to take log.maxBufferBytes; a reader that has stalled is not waited for longer.
 */
export const EXIT_LOG_WAIT_MS = 2000;

/** The code of the exit under way, once one is decided. */
let decided: number | null = null;

/**
 * Ends the process once the lines logged so far are written (bounded by EXIT_LOG_WAIT_MS).
 * process.exit drops what still waits in the stdout stream's queue, so every deliberate exit
 * comes through here. The first decision wins: while it waits for the log, a later one (the
 * drain finishing after the drain time-out cut requests) cannot turn exit 1 into exit 0.
 */
export async function exitAfterLogs(logger: Logger, code: number): Promise<void> {
  if (decided !== null) return;
  decided = code;
  await logger.drain?.(EXIT_LOG_WAIT_MS);
  process.exit(code);
}

/** A start-up failure: what the fd takes at once is written, then the reasons go to stderr. */
export function die(lines: readonly string[], logger?: Logger): never {
  logger?.flush?.();
  for (const line of lines) process.stderr.write(`hypergate: ${line}\n`);
  process.exit(1);
}
