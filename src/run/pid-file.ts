import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';

/**
 * server.pidFile: writes this process's pid for supervisors (`kill -HUP "$(cat FILE)"`), and
 * removes the file when the process exits, if it still holds this pid (a newer instance may have
 * taken it over meanwhile). Call it once the signal handlers are in place, so a supervisor that
 * reads the file and signals at once meets them. Throws when the file cannot be written.
 */
export function writePidFile(path: string): void {
  const mine = `${process.pid}\n`;
  writeFileSync(path, mine);
  process.once('exit', () => {
    try {
      if (readFileSync(path, 'utf8') === mine) unlinkSync(path);
    } catch {
      // Removed by someone else already: nothing to do.
    }
  });
}

/** The one-line start-up error for a pid file that cannot be written. */
export function pidFileProblem(path: string, err: unknown): string {
  return `cannot write server.pidFile ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
}
