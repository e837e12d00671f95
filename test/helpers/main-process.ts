import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/load.ts';

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
}

export function startMain(args: readonly string[], env: Record<string, string> = {}): MainProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), ...args], {
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
      const line = buffer.slice(0, nl);
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
    waitFor: (match, timeoutMs = 20_000) =>
      new Promise((done, fail) => {
        const check = (): boolean => {
          const found = records.find(match);
          if (found === undefined) return false;
          waiters.delete(check as () => void);
          clearTimeout(timer);
          done(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check as () => void);
          fail(new Error(`no matching log line within ${timeoutMs} ms; stderr:\n${err}\nstdout:\n${records.map((r) => JSON.stringify(r)).join('\n')}`));
        }, timeoutMs);
        if (!check()) waiters.add(check as () => void);
        void exit.then(() => setTimeout(() => {
          if (waiters.has(check as () => void)) {
            waiters.delete(check as () => void);
            clearTimeout(timer);
            fail(new Error(`the process exited first; stderr:\n${err}`));
          }
        }, 50));
      }),
    exited: () => exit,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
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
