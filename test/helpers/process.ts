import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface GatewayProcess {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the port once the gateway logs that it listens; rejects if it exits first. */
  readonly listening: Promise<number>;
  /** Resolves with the exit code (or the signal name). */
  readonly exited: Promise<number | string>;
}

/** Starts a real gateway process: `node --import tsx src/main.ts <args>`, or any command given (in `cwd`, default the checkout). */
export function spawnGateway(args: readonly string[], options: { env?: NodeJS.ProcessEnv; command?: readonly string[]; cwd?: string } = {}): GatewayProcess {
  const [cmd, ...pre] = options.command ?? [process.execPath, '--import', 'tsx', 'src/main.ts'];
  const child = spawn(cmd ?? process.execPath, [...pre, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, HYPERGATE_ADMIN_PORT: 'null', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const listening = new Promise<number>((resolvePort, reject) => {
    const check = (): void => {
      const match = /"event":"listening","port":(\d+)/.exec(out);
      if (match) {
        child.stdout?.off('data', check);
        resolvePort(Number(match[1]));
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => reject(new Error(`gateway exited (${code}) before listening:\n${out}\n${err}`)));
  });
  listening.catch(() => {});
  return { child, stdout: () => out, stderr: () => err, listening, exited };
}
