import { randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { ManualClock } from './clock.ts';
import { bearer, startGateway, type RunningGateway } from './gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey, type TokenOptions } from './keys.ts';
import { sample } from './metrics.ts';
import { startRedis, type RedisServer } from './redis.ts';
import { startTestUpstream, type TestUpstream } from './upstream.ts';
import { PATIENCE_MS } from './wait.ts';

/**
 * Several real gateways (createGateway, each with its own connections to Redis and its own clock)
 * sharing one real Redis, one upstream and one key server: instances of one deployment. Each world
 * takes its own redis.keyPrefix, so worlds on one Redis never see each other. The Redis deadline is
 * a generous 250 ms (on a machine busy with other test files); fault tests set their own.
 */
export interface SharedWorld {
  readonly redis: RedisServer;
  readonly upstream: TestUpstream;
  readonly jwks: JwksServer;
  readonly key: TestKey;
  readonly prefix: string;
  readonly gateways: RunningGateway[];
  /** One clock per gateway, in order. */
  readonly clocks: ManualClock[];
  /** The address of `path` on instance `i`. */
  url(i: number, path: string): string;
  token(options?: TokenOptions): Promise<string>;
  /** The config every instance of this world is started with (before per-instance overrides). */
  config(overrides?: unknown): unknown;
  /** Starts one more instance and waits until it is subscribed (`logger`: to read its log lines). */
  add(overrides?: unknown, clock?: ManualClock, logger?: Logger): Promise<RunningGateway>;
  close(): Promise<void>;
}

/** Polls an async condition until it holds (bounded): for what happens in Redis or another process. */
export async function until(ready: () => Promise<boolean>, what: string, timeoutMs = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A metric of a gateway (0 when absent). */
export async function metric(gw: RunningGateway, name: string, labels: Record<string, string> = {}): Promise<number> {
  return sample(await gw.gateway.metrics.text(), name, labels) ?? 0;
}

/**
 * `subscribers`: how many instances hear the invalidation channel of `prefix` (by default PUBSUB
 * NUMSUB on `redis`; a Redis Cluster counts on every node, under its hash-tagged prefix).
 */
export async function startSharedWorld(
  redis: RedisServer,
  count: number,
  overrides: unknown = {},
  subscribers?: (prefix: string) => Promise<number>,
): Promise<SharedWorld> {
  const key = await makeKey('ES256');
  const jwks = await startJwksServer([key.publicJwk]);
  const upstream = await startTestUpstream();
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  const base = {
    upstream: { url: upstream.url },
    auth: { jwksUrl: jwks.url },
    redis: { url: redis.url, keyPrefix: prefix, timeoutMs: 250 },
    log: { access: false },
  };
  const gateways: RunningGateway[] = [];
  const clocks: ManualClock[] = [];
  const config = (more: unknown = {}): unknown => mergeConfig(mergeConfig(base, overrides), more);
  const subscribed = async (): Promise<number> => {
    if (subscribers !== undefined) return subscribers(prefix);
    const answer = (await redis.command('PUBSUB', 'NUMSUB', `${prefix}invalidate`)) as [string, number];
    return answer[1];
  };
  const add = async (more: unknown = {}, clock = new ManualClock(), logger?: Logger): Promise<RunningGateway> => {
    const gw = await startGateway(config(more), logger === undefined ? { clock } : { clock, logger });
    gateways.push(gw);
    clocks.push(clock);
    const want = gateways.length;
    await until(async () => (await subscribed()) >= want && (await metric(gw, 'hypergate_redis_up')) === 1, 'the instance to connect and subscribe');
    return gw;
  };
  for (let i = 0; i < count; i++) await add();
  return {
    redis,
    upstream,
    jwks,
    key,
    prefix,
    gateways,
    clocks,
    config,
    add,
    url: (i, path) => `${gateways[i]?.url as string}${path}`,
    token: (options = {}) => signToken(key, { nowSeconds: clocks[0]?.seconds ?? Math.floor(Date.now() / 1000), ...options }),
    close: async () => {
      await Promise.all(gateways.map((gw) => gw.close()));
      await upstream.close();
      await jwks.close();
    },
  };
}

/** What a suite's world hands its tests: the Redis, the instances, and headers of a reader and of a writer of customers. */
export interface SuiteParts {
  readonly redis: RedisServer;
  readonly world: SharedWorld;
  readonly reader: Record<string, string>;
  readonly writer: Record<string, string>;
}

/**
 * Worlds whose Redis is never made slow or stopped: a Redis deadline no busy machine runs past, so
 * Redis answering within it is Redis healthy (the 250 ms default is for worlds that test faults).
 */
export const STEADY_REDIS = { redis: { timeoutMs: 2000 } };

/**
 * A real redis-server and `count` instances sharing it for one suite: started in the suite's
 * before(), closed in its after(). Call it inside describe(); read them in the tests (`get()`, in a
 * before() of the suite: they exist from then on). `overrides` go to every instance's config,
 * `redisArgs` to redis-server.
 */
export function suiteWorld(
  count: number,
  overrides: unknown = {},
  redisArgs: readonly string[] = [],
): { world(): SharedWorld; redis(): RedisServer; get(): SuiteParts } {
  let redis: RedisServer | undefined;
  let world: SharedWorld | undefined;
  let parts: SuiteParts | undefined;
  before(async () => {
    redis = await startRedis(redisArgs);
    world = await startSharedWorld(redis, count, overrides);
    const reader = bearer(await world.token());
    const writer = bearer(await world.token({ claims: { scope: 'customers:read customers:write' } }));
    parts = { redis, world, reader, writer };
  });
  after(async () => {
    await world?.close();
    await redis?.close();
  });
  return { world: () => world as SharedWorld, redis: () => redis as RedisServer, get: () => parts as SuiteParts };
}
