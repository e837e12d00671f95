import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type RedisServer } from './redis.ts';
import { until } from './shared-world.ts';

/** A Redis Cluster of three masters, each with one replica: six real redis-server processes. */
export interface RedisClusterSet {
  readonly servers: readonly RedisServer[];
  /** redis:// URLs of every node (seed nodes for redis.cluster). */
  readonly seeds: readonly string[];
  /** The server that is the master of `key`'s slot now. */
  masterOf(key: string): Promise<RedisServer>;
  /** SIGKILL one node; the others stop asking it. */
  kill(server: RedisServer): Promise<void>;
  /** Runs a command on every live node and returns the answers. */
  everyNode(name: string, ...args: (string | number)[]): Promise<unknown[]>;
  close(): Promise<void>;
}

/**
 * Starts six nodes and joins them with redis-cli --cluster create. A lost master is replaced
 * within seconds: cluster-node-timeout 1 s, and a replica may take over however long ago it last
 * heard its master (validity factor 0; an idle master is pinged only every 10 s).
 */
export async function startRedisCluster(): Promise<RedisClusterSet> {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-cluster-'));
  const servers: RedisServer[] = [];
  const dead = new Set<RedisServer>();
  const live = (): RedisServer[] => servers.filter((s) => !dead.has(s));
  for (let i = 0; i < 6; i++) {
    servers.push(
      await startRedis([
        '--dir',
        dir,
        '--dbfilename',
        `node-${i}.rdb`,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${i}.conf`),
        '--cluster-node-timeout',
        '1000',
        '--cluster-replica-validity-factor',
        '0',
      ]),
    );
  }
  const created = spawnSync('redis-cli', ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '1', '--cluster-yes'], {
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);
  const everyNode = (name: string, ...args: (string | number)[]): Promise<unknown[]> => Promise.all(live().map((s) => s.command(name, ...args)));
  await until(async () => (await everyNode('CLUSTER', 'INFO')).every((info) => String(info).includes('cluster_state:ok')), 'the cluster to form', 30_000);
  // Each replica synchronised with its master, so losing the master loses nothing written.
  await until(
    async () => (await everyNode('INFO', 'replication')).filter((info) => String(info).includes('master_link_status:up')).length === 3,
    'the replicas to synchronise',
    30_000,
  );
  return {
    servers,
    seeds: servers.map((s) => s.url),
    everyNode,
    kill: async (server) => {
      dead.add(server);
      await server.kill();
    },
    masterOf: async (key) => {
      const slot = (await live()[0]!.command('CLUSTER', 'KEYSLOT', key)) as number;
      const slots = (await live()[0]!.command('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const range = slots.find(([from, to]) => slot >= from && slot <= to);
      const server = servers.find((s) => s.port === range?.[2][1]);
      if (server === undefined) throw new Error(`no master serves slot ${slot}`);
      return server;
    },
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
