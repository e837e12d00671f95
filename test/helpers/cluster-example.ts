import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import type { TestKey } from './keys.ts';
import { freePort, startMain, type MainProcess } from './main-process.ts';
import { startDeployBasics, startNginx, type Closers, type Nginx } from './nginx.ts';
import { startRedis, type RedisServer } from './redis.ts';
import { spawnSentinel } from './redis-sentinel.ts';
import { until } from './shared-world.ts';
import type { TestUpstream } from './upstream.ts';

/** The deployment example's folder: nginx.conf, redis.conf, gateway.json, run.sh. */
export const CLUSTER_EXAMPLE = resolve(PROJECT_ROOT, 'deploy/cluster');

/** The addresses the example's nginx.conf names: its own listener, then one per gateway instance. */
const PROXY_PORT = 8000;
const GATEWAY_PORTS = [8080, 8081, 8082];

/**
 * The example's nginx.conf with its ports replaced in one pass (a new port that happens to equal
 * one of the documented ones is never replaced again).
 */
export function clusterNginxConf(proxyPort: number, gatewayPorts: readonly number[]): string {
  const ports = new Map([[PROXY_PORT, proxyPort], ...GATEWAY_PORTS.map((p, i): [number, number] => [p, gatewayPorts[i] ?? 0])]);
  const conf = readFileSync(join(CLUSTER_EXAMPLE, 'nginx.conf'), 'utf8').replace(/127\.0\.0\.1:(\d+)\b/g, (text, port: string) => {
    const to = ports.get(Number(port));
    return to === undefined ? text : `127.0.0.1:${to}`;
  });
  assert.ok(
    [proxyPort, ...gatewayPorts].every((p) => conf.includes(`127.0.0.1:${p}`)),
    'deploy/cluster/nginx.conf has the documented addresses',
  );
  return conf;
}

/** The example running: its nginx.conf, redis.conf and gateway.json, three gateways and one shared test upstream. */
export interface ClusterExample {
  readonly key: TestKey;
  readonly upstream: TestUpstream;
  /** The master as started (with `sentinel`, a replica of it follows in `replicas`). */
  readonly redis: RedisServer;
  readonly replicas: readonly RedisServer[];
  /** The Sentinels' ports (with `sentinel`). */
  readonly sentinelPorts: readonly number[];
  readonly gateways: readonly MainProcess[];
  /** Each gateway's own address, http://127.0.0.1:<port>. */
  readonly direct: readonly string[];
  /** Each gateway's admin listener. */
  readonly admins: readonly string[];
  readonly nginx: Nginx;
  /** nginx's address. */
  readonly front: string;
  readonly agent: Agent;
  close(): Promise<void>;
}

/**
 * Starts the example's files as run.sh does, with free ports and a test upstream and JWKS instead
 * of the sample service and dev keys; `env` adds gateway settings (HYPERGATE_...). `sentinel`: Redis
 * with a replica and three Sentinels from sentinel.conf, and the gateways on gateway-sentinel.json
 * (as run.sh does with CLUSTER_REDIS=sentinel).
 */
export async function startClusterExample(nginxBinary: string, env: Record<string, string> = {}, sentinel = false): Promise<ClusterExample> {
  const closers: Closers = [];
  const close = async (): Promise<void> => {
    for (const step of closers.splice(0).reverse()) await step();
  };
  try {
    const { dir, key, jwks, upstream } = await startDeployBasics(closers, 'cluster');
    // Redis from the example's redis.conf, on a free port.
    // With Sentinel, each server runs a copy of redis.conf: Sentinel rewrites the file of a server it
    // reconfigures (CONFIG REWRITE), and the example's own file must stay as it is.
    const redisConf = (name: string): string => {
      if (!sentinel) return join(CLUSTER_EXAMPLE, 'redis.conf');
      writeFileSync(join(dir, name), readFileSync(join(CLUSTER_EXAMPLE, 'redis.conf')));
      return join(dir, name);
    };
    const redis = await startRedis(['--dir', dir], redisConf('redis-master.conf'));
    closers.push(() => redis.close());
    const replicas: RedisServer[] = [];
    const sentinelPorts: number[] = [];
    let config = join(CLUSTER_EXAMPLE, 'gateway.json');
    const redisEnv: Record<string, string> = { HYPERGATE_REDIS_URL: redis.url };
    if (sentinel) {
      const replica = await startRedis(
        ['--dir', dir, '--dbfilename', 'replica.rdb', '--replicaof', '127.0.0.1', String(redis.port)],
        redisConf('redis-replica.conf'),
      );
      closers.push(() => replica.close());
      replicas.push(replica);
      await until(async () => String(await redis.command('INFO', 'replication')).includes('connected_slaves:1'), 'the replica to attach');
      const conf = readFileSync(join(CLUSTER_EXAMPLE, 'sentinel.conf'), 'utf8').replace('127.0.0.1 6379 2', `127.0.0.1 ${redis.port} 2`);
      const children: ChildProcess[] = [];
      closers.push(async () => {
        const alive = children.filter((child) => child.exitCode === null && child.signalCode === null);
        for (const child of alive) child.kill('SIGKILL');
        await Promise.all(alive.map((child) => once(child, 'exit')));
      });
      for (let i = 0; i < 3; i++) {
        const port = await freePort();
        writeFileSync(join(dir, `sentinel-${i}.conf`), conf);
        children.push(await spawnSentinel(join(dir, `sentinel-${i}.conf`), ['--port', String(port)]));
        sentinelPorts.push(port);
      }
      config = join(dir, 'gateway-sentinel.json');
      const documented = [26379, 26380, 26381];
      writeFileSync(
        config,
        readFileSync(join(CLUSTER_EXAMPLE, 'gateway-sentinel.json'), 'utf8').replace(
          /"port": (2638[01]|26379)\b/g,
          (_, port: string) => `"port": ${sentinelPorts[documented.indexOf(Number(port))]}`,
        ),
      );
      delete redisEnv['HYPERGATE_REDIS_URL'];
    }
    const ports = [await freePort(), await freePort(), await freePort()];
    const adminPorts = [await freePort(), await freePort(), await freePort()];
    // The example's gateway.json as it is; what differs per machine comes from the environment.
    const gateways = ports.map((port, i) =>
      startMain(['--config', config], {
        HYPERGATE_SERVER_PORT: String(port),
        HYPERGATE_ADMIN_PORT: String(adminPorts[i]),
        ...redisEnv,
        HYPERGATE_UPSTREAM_URL: upstream.url,
        HYPERGATE_AUTH_JWKS_URL: jwks.url,
        HYPERGATE_LOG_ACCESS: 'false',
        ...env,
      }),
    );
    closers.push(async () => {
      for (const g of gateways) g.kill('SIGKILL');
      await Promise.all(gateways.map((g) => g.exited()));
    });
    await Promise.all(gateways.map((g) => g.waitFor((r) => r['event'] === 'listening')));
    await until(async () => ((await redis.command('PUBSUB', 'NUMSUB', 'hypergate:invalidate')) as [string, number])[1] === 3, 'three subscribed gateways');
    const proxyPort = await freePort();
    const nginx = startNginx(nginxBinary, clusterNginxConf(proxyPort, ports), dir);
    closers.push(async () => {
      if (nginx.child.exitCode !== null || nginx.child.signalCode !== null) return;
      const exited = new Promise((done) => nginx.child.once('exit', done));
      nginx.stop();
      await exited;
    });
    const agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
    closers.push(() => agent.close());
    const front = `http://127.0.0.1:${proxyPort}`;
    await until(async () => {
      const res = await request(`${front}/api`, { dispatcher: agent });
      await res.body.dump();
      return res.statusCode === 401;
    }, 'nginx to answer');
    return {
      key,
      upstream,
      redis,
      replicas,
      sentinelPorts,
      gateways,
      direct: ports.map((p) => `http://127.0.0.1:${p}`),
      admins: adminPorts.map((p) => `http://127.0.0.1:${p}`),
      nginx,
      front,
      agent,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
