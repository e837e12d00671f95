import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { freePort } from './main-process.ts';
import { PATIENCE_MS } from './wait.ts';

function findRedisServer(): string | null {
  for (const candidate of ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server']) {
    if (spawnSync(candidate, ['--version']).status === 0) return candidate;
  }
  return null;
}

const binary = findRedisServer();

/** The `skip` option of a suite that needs a real Redis: false when redis-server is installed. */
export const redisSkip: string | false =
  binary === null ? 'redis-server is not installed (apt-get install -y redis-server; .ci/run does it): the shared-state tests cannot run' : false;

/** A real redis-server on a loopback port, with no persistence; stopped, paused and restarted by the test. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Runs one command on a short-lived connection and returns Redis's answer. */
  command(name: string, ...args: (string | number)[]): Promise<unknown>;
  /** SIGSTOP: Redis holds every connection open and answers nothing. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, and waits until the process is gone. */
  kill(): Promise<void>;
  /** A new, empty redis-server on the same port (after kill). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function spawnRedis(port: number, extra: readonly string[], file: string | undefined): Promise<ChildProcess> {
  const child = spawn(
    binary as string,
    [
      ...(file === undefined ? [] : [file]),
      '--save',
      '',
      '--appendonly',
      'no',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--protected-mode',
      'no',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${port}:\n${out}`)), PATIENCE_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) on ${port}:\n${out}`));
    });
  });
  child.stdout?.resume();
  return child;
}

/**
 * Starts redis-server on a free loopback port (`extra`: more server arguments, e.g. --maxmemory;
 * `file`: a redis.conf read first, whose port, persistence and binding these arguments override).
 */
export async function startRedis(extra: readonly string[] = [], file?: string): Promise<RedisServer> {
  let port = await freePort();
  let child: ChildProcess;
  // The port was free a moment ago; another process may have taken it since.
  for (let attempt = 1; ; attempt++) {
    try {
      child = await spawnRedis(port, extra, file);
      break;
    } catch (err) {
      if (attempt === 3) throw err;
      port = await freePort();
    }
  }
  const url = `redis://127.0.0.1:${port}`;
  // A test file that ends without close() (a failed before(), the runner's time-out) must not leave
  // a redis-server behind: the exit handler can only do synchronous work, and kill() is that.
  const orphanGuard = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', orphanGuard);
  const gone = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  return {
    port,
    url,
    command: async (name, ...args) => {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: true, retryStrategy: () => null });
      try {
        await client.connect();
        return await client.call(name, ...args);
      } finally {
        client.disconnect();
      }
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    kill: gone,
    restart: async () => {
      await gone();
      child = await spawnRedis(port, extra, file);
    },
    close: async () => {
      await gone();
      process.off('exit', orphanGuard);
    },
  };
}
