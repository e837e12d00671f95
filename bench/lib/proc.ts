/**
 * Child processes for the benchmarks: pinned to a core with taskset when it is there, tracked so
 * that every one is killed when the harness ends (normally, on error or on Ctrl-C), and measured
 * through /proc.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';

export { freePort } from '../../test/helpers/main-process.ts';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
/** The cores: the servers get one, the load generator the other (bench/README.md). */
export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((p) => existsSync(p)) ?? null;
export const hasTaskset = TASKSET !== null;

const live = new Set<ChildProcess>();

function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
}
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** Spawns `argv` on `core` (taskset -c core when present); the child dies with the harness. */
export function spawnPinned(core: number | null, argv: readonly string[], options: SpawnOptions = {}): ChildProcess {
  const full = core !== null && TASKSET !== null ? [TASKSET, '-c', String(core), ...argv] : [...argv];
  const child = spawn(full[0] as string, full.slice(1), { cwd: ROOT, ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** `node --import tsx <file> ...args`: every server runs with the same loader as `npm start`. */
export function nodeArgv(file: string, args: readonly string[] = [], nodeFlags: readonly string[] = []): string[] {
  return [process.execPath, ...nodeFlags, '--import', 'tsx', resolve(ROOT, file), ...args];
}

/** utime + stime of a process, in ms (Linux /proc; clock ticks are 100 Hz). NaN elsewhere. */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** cpuMs of a process and of its children (a cluster's workers), in ms. */
export function treeCpuMs(pid: number): number {
  let total = cpuMs(pid);
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean)) total += treeCpuMs(Number(child));
  } catch {
    // Gone meanwhile, or no children file (not Linux): the process's own time only.
  }
  return total;
}

/** Resident set size of a process, in bytes (VmRSS), or NaN. */
export function rssBytes(pid: number): number {
  return statusBytes(pid, 'VmRSS');
}

/** The most RSS the process has held since it started (the kernel's high-water mark): what a container limit must allow. */
export function peakRssBytes(pid: number): number {
  return statusBytes(pid, 'VmHWM');
}

function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? Number.NaN : Number(m[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

function tryConnect(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

/**
 * Waits until `port` accepts connections (bounded); fails at once when the child exits first,
 * with what it wrote on stderr.
 */
export async function waitListening(child: ChildProcess, port: number, what: string, timeoutMs = 20_000): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before listening:\n${stderr}`);
    if (await tryConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not listen on ${port} within ${timeoutMs} ms:\n${stderr}`);
}

/** Ends a child: `signal` first, SIGKILL after `graceMs`; resolves once it is gone. */
export function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL', graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill(signal);
  });
}

/** Runs a child to its end and returns its stdout; rejects on a non-zero exit or after `timeoutMs`. */
export function collect(child: ChildProcess, what: string, timeoutMs: number): Promise<string> {
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${what} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      fail(new Error(`${what}: ${e.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) done(out);
      else fail(new Error(`${what} exited (${code ?? signal}):\n${err}${out}`));
    });
  });
}
