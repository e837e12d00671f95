import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { PATIENCE_MS } from './wait.ts';

export type LogRecord = Record<string, unknown>;

/** hypergate's `npm start` as a real child process, with its JSON log lines parsed as they come. */
export interface MainProcess {
  readonly child: ChildProcess;
  readonly records: LogRecord[];
  stderr(): string;
  /** Resolves with the first log record (already seen or to come) that satisfies `match`. */
  waitFor(match: (r: LogRecord) => boolean, timeoutMs?: number): Promise<LogRecord>;
  /** Resolves with the exit code. */
  exited(): Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
  /**
   * Stops reading its stdout, as a log shipper that hangs: once the pipe and this side's read
   * buffer are full, every write(2) of the child to stdout meets a full pipe.
   */
  stallStdout(): void;
  /** Reads its stdout again. */
  resumeStdout(): void;
}

/** Where the process's stdout goes: a pipe this side reads, or a terminal (util-linux `script` reads it and writes to that pipe). */
export type StdoutKind = 'pipe' | 'terminal';

export function startMain(args: readonly string[], env: Record<string, string> = {}, stdout: StdoutKind = 'pipe'): MainProcess {
  const argv = [process.execPath, '--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), ...args];
  // script -q: no banner; -f: pass output on at once; -e: its exit code is the child's; -c: the command.
  const [command, ...rest] = stdout === 'pipe' ? argv : ['script', '-qfec', argv.map((a) => `'${a}'`).join(' '), '/dev/null'];
  const child = spawn(command as string, rest, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const records: LogRecord[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      // A terminal ends lines with CR LF.
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      try {
        records.push(JSON.parse(line) as LogRecord);
      } catch {
        records.push({ raw: line });
      }
    }
    for (const w of waiters) w();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    records,
    stderr: () => err,
    waitFor: (match, timeoutMs = PATIENCE_MS) =>
      new Promise((done, fail) => {
        const check = (): boolean => {
          const found = records.find(match);
          if (found === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          done(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`no matching log line within ${timeoutMs} ms; stderr:\n${err}\nstdout:\n${records.map((r) => JSON.stringify(r)).join('\n')}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
        void exit.then(() =>
          setTimeout(() => {
            if (waiters.has(check)) {
              waiters.delete(check);
              clearTimeout(timer);
              fail(new Error(`the process exited first; stderr:\n${err}`));
            }
          }, 50),
        );
      }),
    exited: () => exit,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    stallStdout: () => child.stdout?.pause(),
    resumeStdout: () => child.stdout?.resume(),
  };
}

/** A port that was free a moment ago (for processes that must be told their port up front). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}
