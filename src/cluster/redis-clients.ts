import { createRequire } from 'node:module';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { redactUrl } from '../config/redact.ts';
import type { RedisTopology } from '../config/redis-topology.ts';
import { headerValueOf } from '../config/service-checks.ts';
import type { RedisConfig } from '../config/types.ts';

type IoRedis = typeof import('ioredis');
let loaded: IoRedis | null = null;

/**
 * ioredis, loaded when a link to Redis is made (redis.url set), not at start: importing it is
 * ~18 MB of resident memory a gateway without Redis never needs (the start figure in
 * bench/RESULTS.md). ioredis is a CommonJS package, so it loads synchronously.
 */
export function ioredis(): IoRedis {
  loaded ??= createRequire(import.meta.url)('ioredis') as IoRedis;
  return loaded;
}

/**
 * A connection to Redis as ioredis gives it: one server (also a master found through Sentinel) or
 * a Redis Cluster. The commands the link sends exist on both alike.
 */
export type RedisClient = Redis | Cluster;

/** The first `{` to the next `}` of a key: what Redis Cluster hashes to choose its slot. */
export function hashTagged(prefix: string): string {
  return `{${prefix}}`;
}

/** The ioredis client of the topology the config names, with the link's connection options. */
export function makeClient(config: RedisConfig, options: RedisOptions): RedisClient {
  const { Redis: Server, Cluster: RedisCluster } = ioredis();
  if (config.sentinels !== null) {
    const secret = (value: RedisConfig['password']): string | undefined => (value === null ? undefined : headerValueOf(value, process.env));
    const sentinelPassword = secret(config.sentinelPassword);
    const password = secret(config.password);
    return new Server({
      ...options,
      sentinels: config.sentinels.map(({ host, port }) => ({ host, port })),
      name: config.name ?? '',
      ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
      ...(password === undefined ? {} : { password }),
      sentinelRetryStrategy: (times) => Math.min(times * 100, 1000),
      // Subscribed to the Sentinels' +switch-master: a failover is followed as soon as it is
      // announced, not when the old master's connection times out.
      failoverDetector: true,
      // A master demoted to a replica answers writes with READONLY until its clients are
      // closed: reconnecting asks the Sentinels for the new one.
      reconnectOnError: (err) => err.message.startsWith('READONLY'),
    });
  }
  if (config.cluster !== null) {
    const seeds = config.cluster.map(seedOptions);
    const first = seeds[0];
    const clusterOptions: ClusterOptions = {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      // The commands of a failed node are not held for its replica's promotion: the caller's
      // deadline and fallback decide; the slots are asked again at once.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 0,
      retryDelayOnTryAgain: 0,
      clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
      slotsRefreshTimeout: config.connectTimeoutMs,
      // A master that is killed sends no MOVED: the slots are asked every second, so its replica's
      // promotion is followed within about a second of the cluster's own decision.
      slotsRefreshInterval: 1000,
      scaleReads: 'master',
      redisOptions: { ...options, username: first?.username, password: first?.password, tls: first?.tls },
    };
    return new RedisCluster(
      seeds.map(({ host, port }) => ({ host, port })),
      clusterOptions,
    );
  }
  return new Server(config.url as string, options);
}

/**
 * The invalidation subscription on a Redis Cluster: one connection to one node, any node (a cluster
 * passes every message to every node), and a new one to another node when it drops. ioredis' own
 * cluster subscriber moves to another node silently, and a move that is not seen is a gap in what
 * this instance heard. `listen` sets a connection up (subscribes on ready, reports loss);
 * `subscribers` holds the connection open now, for close.
 */
export function clusterSubscription(
  client: Cluster,
  config: RedisConfig,
  listen: (sub: Redis) => void,
  closed: () => boolean,
  subscribers: RedisClient[],
): void {
  let tries = 0;
  const open = (): void => {
    if (closed()) return;
    const nodes = client.nodes('all');
    const node = nodes.length > 0 ? nodes[tries % nodes.length]?.options : undefined;
    const seed = seedOptions(config.cluster?.[tries % config.cluster.length] ?? '');
    tries++;
    const sub = new (ioredis().Redis)({
      ...seed,
      ...(node === undefined ? {} : { host: node.host, port: node.port }),
      connectionName: 'hypergate-sub',
      connectTimeout: config.connectTimeoutMs,
      autoResubscribe: false,
      enableOfflineQueue: false,
      // No reconnection to the same node: it may be the one that was lost. Another one is chosen.
      retryStrategy: () => null,
    });
    subscribers.push(sub);
    listen(sub);
    sub.on('ready', () => (tries = 0));
    sub.once('end', () => {
      subscribers.splice(subscribers.indexOf(sub), 1);
      setTimeout(open, Math.min(tries * 100, 1000)).unref();
    });
  };
  open();
}

/** host, port, credentials and TLS of a redis:// or rediss:// seed node. */
function seedOptions(text: string): Pick<RedisOptions, 'host' | 'port' | 'username' | 'password' | 'tls'> {
  const url = new URL(text === '' ? 'redis://127.0.0.1:6379' : text);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? 6379 : Number(url.port),
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** Where the link connects, for the log: no credentials. */
export function describeRedis(config: RedisConfig, topology: RedisTopology): string {
  if (topology === 'sentinel')
    return `master "${config.name ?? ''}" through Sentinel ${(config.sentinels ?? []).map(({ host, port }) => `${host}:${port}`).join(', ')}`;
  if (topology === 'cluster') return `Redis Cluster, seed nodes ${(config.cluster ?? []).map(redactUrl).join(', ')}`;
  return redactUrl(config.url as string);
}
