import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './main-process.ts';
import { startRedis, type RedisServer } from './redis.ts';
import { until } from './shared-world.ts';

const SENTINEL = ['/usr/bin/redis-sentinel', '/usr/local/bin/redis-sentinel'].find((candidate) => spawnSync(candidate, ['--version']).status === 0);

/** The `skip` option of a suite that needs Redis Sentinel: false when redis-sentinel is installed. */
export const sentinelSkip: string | false =
  SENTINEL === undefined ? 'redis-sentinel is not installed (apt-get install -y redis-sentinel; .ci/run does it): the Sentinel tests cannot run' : false;

/** The master's name the Sentinels of these tests monitor. */
export const MASTER_NAME = 'hypergate-test';

/** A master, its replica and three Sentinels, every one a real process on a loopback port. */
export interface SentinelSet {
  /** [master, replica] as started; after a failover the replica is the master. */
  readonly servers: readonly RedisServer[];
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The server Sentinel names as the master now. */
  master(): Promise<RedisServer>;
  /** SENTINEL FAILOVER, and waits until the other server is the master and takes writes. */
  failover(): Promise<RedisServer>;
  close(): Promise<void>;
}

/** One command to a Sentinel (or any Redis) on a loopback port. */
export async function ask(port: number, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: true, retryStrategy: () => null });
  try {
    await client.connect();
    return await client.call(args[0] as string, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/** Starts redis-sentinel on `file` (`args`: more of its arguments) and waits until it monitors its master. */
export async function spawnSentinel(file: string, args: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(SENTINEL as string, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-sentinel did not start:\n${out}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('+monitor')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-sentinel exited (${code}):\n${out}`));
    });
  });
  child.stdout?.resume();
  return child;
}

/**
 * Starts a master, a replica of it and three Sentinels (quorum 2, a master down after 1 s). Each
 * Sentinel writes its own config file (it rewrites it as it learns), in a folder removed at close.
 */
export async function startSentinelSet(): Promise<SentinelSet> {
  // Replication writes RDB files: in a folder of the test's own, not the working directory.
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-sentinel-'));
  const master = await startRedis(['--dir', dir, '--dbfilename', 'master.rdb']);
  const replica = await startRedis(['--dir', dir, '--dbfilename', 'replica.rdb', '--replicaof', '127.0.0.1', String(master.port)]);
  const servers = [master, replica];
  await until(async () => String(await master.command('INFO', 'replication')).includes('connected_slaves:1'), 'the replica to attach');
  const children: ChildProcess[] = [];
  const sentinels: { host: string; port: number }[] = [];
  const orphanGuard = (): void => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', orphanGuard);
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = join(dir, `sentinel-${i}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `dir ${dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
        `sentinel failover-timeout ${MASTER_NAME} 10000`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    children.push(await spawnSentinel(file));
    sentinels.push({ host: '127.0.0.1', port });
  }
  const masterPort = async (): Promise<number> => {
    const answer = (await ask(sentinels[0]!.port, 'SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as [string, string];
    return Number(answer[1]);
  };
  const master_ = async (): Promise<RedisServer> => {
    const port = await masterPort();
    return servers.find((s) => s.port === port) as RedisServer;
  };
  // A failover needs the Sentinel to know the replica (its first INFO of the master names it).
  await until(
    async () => ((await ask(sentinels[0]!.port, 'SENTINEL', 'replicas', MASTER_NAME)) as unknown[]).length === 1,
    'the Sentinels to know the replica',
  );
  return {
    servers,
    sentinels,
    master: master_,
    failover: async () => {
      const before = await masterPort();
      await ask(sentinels[0]!.port, 'SENTINEL', 'FAILOVER', MASTER_NAME);
      await until(async () => (await masterPort()) !== before, 'Sentinel to name the new master', 20_000);
      const now = await master_();
      await until(async () => String(await now.command('INFO', 'replication')).includes('role:master'), 'the new master to take writes', 20_000);
      return now;
    },
    close: async () => {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null) return;
          child.kill('SIGKILL');
          await once(child, 'exit');
        }),
      );
      process.off('exit', orphanGuard);
      await Promise.all(servers.map((s) => s.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
