import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import type { TestKey } from './keys.ts';
import { freePort, startMain, type MainProcess } from './main-process.ts';
import { startDeployBasics, startNginx, type Closers, type Nginx } from './nginx.ts';
import { startRedis, type RedisServer } from './redis.ts';
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
  readonly redis: RedisServer;
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
 * of the sample service and dev keys; `env` adds gateway settings (HYPERGATE_...).
 */
export async function startClusterExample(nginxBinary: string, env: Record<string, string> = {}): Promise<ClusterExample> {
  const closers: Closers = [];
  const close = async (): Promise<void> => {
    for (const step of closers.splice(0).reverse()) await step();
  };
  try {
    const { dir, key, jwks, upstream } = await startDeployBasics(closers, 'cluster');
    // Redis from the example's redis.conf, on a free port.
    const redis = await startRedis([], join(CLUSTER_EXAMPLE, 'redis.conf'));
    closers.push(() => redis.close());
    const ports = [await freePort(), await freePort(), await freePort()];
    const adminPorts = [await freePort(), await freePort(), await freePort()];
    // The example's gateway.json as it is; what differs per machine comes from the environment.
    const gateways = ports.map((port, i) =>
      startMain(['--config', join(CLUSTER_EXAMPLE, 'gateway.json')], {
        HYPERGATE_SERVER_PORT: String(port),
        HYPERGATE_ADMIN_PORT: String(adminPorts[i]),
        HYPERGATE_REDIS_URL: redis.url,
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
