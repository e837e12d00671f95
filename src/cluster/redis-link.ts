import { performance } from 'node:perf_hooks';
import type { Redis, RedisOptions } from 'ioredis';
import type { Clock } from '../lib/clock.ts';
import { redisTopology, type RedisTopology } from '../config/redis-topology.ts';
import type { RedisConfig } from '../config/types.ts';
import type { Logger } from '../observability/logger.ts';
import { CircuitBreaker, PROBE } from '../lib/breaker.ts';
import { Deadline } from '../lib/deadline.ts';
import { clusterSubscription, describeRedis, hashTagged, makeClient, type RedisClient } from './redis-clients.ts';
import type { RedisMetrics } from './redis-metrics.ts';
import { SCRIPTS, type LuaScript } from './scripts.ts';

/**
 * Why a Redis call gave no answer: it ran past its deadline, the connection is not up, the
 * breaker is open, or the link was closed. The caller goes on without Redis (its fallback).
 */
export class RedisUnavailable extends Error {
  readonly reason: 'timeout' | 'down' | 'breaker' | 'closed';
  constructor(reason: RedisUnavailable['reason']) {
    super(`redis ${reason}`);
    this.name = 'RedisUnavailable';
    this.reason = reason;
  }
}

/** What a call is for: the label of its metrics. */
export type RedisOp = 'tier_read' | 'tier_write' | 'lock' | 'rate' | 'invalidate' | 'idempotency' | 'instances' | 'api_key';

/**
 * Which of the link's refusals a call may pass. `ordinary` (a request's own calls): none, so a
 * request never waits behind an overdue call or calls a Redis the breaker has given up on.
 * `despite-overdue`: sent even while an earlier call is overdue, within its own deadline (the
 * invalidation a write's answer waits for). `despite-breaker`: also sent while the breaker is open
 * (what a write owes after its answer, which must be stored while Redis answers at all); its outcome
 * does not move the breaker, which judges ordinary calls.
 */
export type Urgency = 'ordinary' | 'despite-overdue' | 'despite-breaker';

/** A Redis error reply (ioredis' ReplyError): Redis answered, so the connection is fine. */
function isReply(err: unknown): err is Error {
  return err instanceof Error && err.name === 'ReplyError';
}

/**
 * The connection to Redis, and the only place that calls it. The client is ioredis 5, chosen
 * because its own command time-out still fires for a command already written to a Redis stopped
 * with SIGSTOP, where node-redis 5 and 6 drop the timer once the command is written and wait for
 * ever (measured on redis-server 7.0: ioredis 5 and 6 and iovalkey rejected after 50 ms, node-redis
 * gave no answer in 3 s; all of them failed at once with Redis killed and worked again on their
 * own after a restart). It is pure JavaScript, with no install script.
 *
 * All the same, every call here races its own deadline (redis.timeoutMs unless said otherwise),
 * so nothing depends on a client's timer. Calls fail at once while the connection is down (no
 * offline queue: a request never waits for a reconnect), while an earlier call is overdue (Redis
 * answers in order, so nothing sent after it could be in time) and while the breaker is open
 * (redis.breaker: consecutive calls that time out or lose the connection open it; after its
 * cooldown one probe call may pass). An error reply (OOM, WRONGTYPE) is an answer: it fails that
 * call but counts as a working Redis.
 */
export class RedisLink {
  /**
   * Prefix of the shared tier's keys, its locks and the invalidation channel. On Redis Cluster it
   * is redis.keyPrefix in a hash tag (`{hypergate:}`), so every key one script touches is in one
   * slot; on one server it is redis.keyPrefix as it is.
   */
  readonly prefix: string;
  /**
   * The key the shared tier's scripts name (their generation): Redis Cluster sends a script to the
   * node of its keys, and the keys a tier script builds from `prefix` are all in this one's slot.
   */
  readonly slotKey: string;
  /** Prefix of keys each used alone (rate-limit buckets, idempotency records): redis.keyPrefix, never tagged, so a cluster spreads them. */
  readonly recordPrefix: string;
  readonly topology: RedisTopology;
  readonly #client: RedisClient;
  readonly #config: RedisConfig;
  readonly #breaker: CircuitBreaker;
  readonly #timeoutMs: number;
  readonly #metrics: RedisMetrics;
  readonly #logger: Logger;
  readonly #where: string;
  readonly #subscribers: RedisClient[] = [];
  #closed = false;
  /** A connection problem was logged since the last 'ready': a Redis that stays down is logged once, not per retry. */
  #reported = false;
  /** Has the connection ever failed (at start, or since)? */
  #everDown = false;
  /** Calls that ran past their deadline and whose reply has not come yet. */
  #overdue = 0;
  /** The address of the server last connected to (a master found through Sentinel), and how often it changed. */
  #address: string | null = null;
  #masterChanges = 0;

  constructor(config: RedisConfig, clock: Clock, logger: Logger, metrics: RedisMetrics) {
    this.topology = redisTopology(config);
    this.recordPrefix = config.keyPrefix;
    this.prefix = this.topology === 'cluster' ? hashTagged(config.keyPrefix) : config.keyPrefix;
    this.slotKey = `${this.prefix}gen`;
    this.#config = config;
    this.#timeoutMs = config.timeoutMs;
    this.#breaker = new CircuitBreaker(config.breaker, clock);
    this.#metrics = metrics;
    this.#logger = logger;
    this.#where = describeRedis(config, this.topology);
    this.#client = this.#connect(config, 'hypergate');
    metrics.watch(this);
  }

  /** Connected and ready for commands. */
  get up(): boolean {
    return !this.#closed && this.#client.status === 'ready';
  }

  /** Has the connection ever failed since the link was made (a start with Redis away included)? */
  get everDown(): boolean {
    return this.#everDown;
  }

  /** How often the link found its server at another address than before (a Sentinel failover). */
  get masterChanges(): number {
    return this.#masterChanges;
  }

  /** Masters the link knows: a Redis Cluster's, else 1 while connected. */
  get masters(): number {
    if (!this.up) return 0;
    return 'nodes' in this.#client ? this.#client.nodes('master').length : 1;
  }

  get breakerState(): CircuitBreaker['state'] {
    return this.#breaker.state;
  }

  /** The default deadline of a call on a request's path (redis.timeoutMs). */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * Runs one call within `deadlineMs`. Rejects with RedisUnavailable when it cannot answer in
   * time (or at all), or with Redis's own error reply. `urgency` says which refusals it may pass.
   */
  call<T>(op: RedisOp, run: (client: RedisClient) => Promise<T>, deadlineMs = this.#timeoutMs, urgency: Urgency = 'ordinary'): Promise<T> {
    if (this.#closed) return this.#refuse(op, 'closed');
    if (this.#client.status !== 'ready') return this.#refuse(op, 'down');
    // Redis answers the commands of a connection in order: while an earlier one is overdue, this
    // one cannot be answered in time either. Refused at once, a request's Redis calls one after
    // another (rate decision, tier read, lock) cost it one deadline in all, not one each.
    if (this.#overdue > 0 && urgency === 'ordinary') return this.#refuse(op, 'timeout');
    const judged = urgency !== 'despite-breaker';
    const admit = judged ? this.#breaker.admit() : 0;
    if (admit > 0) return this.#refuse(op, 'breaker');
    const probe = admit === PROBE;
    const started = performance.now();
    return new Promise<T>((resolve, reject) => {
      const deadline = new Deadline(deadlineMs, 'the Redis call passed its deadline', {
        abort: () => {
          this.#overdue++;
          if (judged) this.#breaker.failed(probe);
          this.#metrics.call(op, 'timeout', performance.now() - started);
          reject(new RedisUnavailable('timeout'));
        },
      });
      // A reply after the deadline: the call was settled as a time-out, and is no longer overdue.
      const late = (): boolean => {
        if (deadline.passed) this.#overdue--;
        return deadline.passed;
      };
      run(this.#client).then(
        (value) => {
          if (late()) return;
          deadline.clear();
          if (judged) this.#breaker.succeeded(probe);
          this.#metrics.call(op, 'ok', performance.now() - started);
          resolve(value);
        },
        (err: unknown) => {
          if (late()) return;
          deadline.clear();
          if (judged && isReply(err)) this.#breaker.succeeded(probe);
          else if (judged) this.#breaker.failed(probe);
          this.#metrics.call(op, isReply(err) ? 'error' : 'down', performance.now() - started);
          reject(isReply(err) ? err : new RedisUnavailable('down'));
        },
      );
    });
  }

  /**
   * Runs a Lua script by its SHA-1 (EVALSHA). A Redis that restarted empty has forgotten it and
   * answers NOSCRIPT (the reply's error code, its first word: https://redis.io/docs/latest/commands/evalsha/);
   * then it is sent whole once (EVAL, which also caches it again).
   */
  script(
    op: RedisOp,
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    deadlineMs?: number,
    urgency: Urgency = 'ordinary',
  ): Promise<unknown> {
    return this.call(
      op,
      async (client) => {
        try {
          return await client.evalsha(script.sha, keys.length, ...keys, ...args);
        } catch (err) {
          if (!isReply(err) || !err.message.startsWith('NOSCRIPT')) throw err;
          return client.eval(script.lua, keys.length, ...keys, ...args);
        }
      },
      deadlineMs,
      urgency,
    );
  }

  /**
   * A second connection subscribed to `channel` (a subscribed connection can do nothing else).
   * `subscribed` runs each time the subscription is (re)made: messages sent while it was down
   * are lost (pub/sub keeps nothing), so the caller resynchronises there. `lost` runs when its
   * connection drops: from then on messages are missed. Through Sentinel the connection finds the
   * new master after a failover (Sentinel closes the clients of the old one); on Redis Cluster it is
   * one connection to one node, any node (a cluster passes every message to every node), and a new
   * one to another node when it drops: ioredis' own cluster subscriber moves silently, and a move
   * that is not seen is a gap in what this instance heard.
   */
  subscribe(channel: string, onMessage: (message: string) => void, subscribed: () => void, lost: () => void): void {
    const listen = (sub: Redis): void => {
      // The command connection logs the outage; this one only reconnects.
      sub.on('error', () => {});
      sub.on('close', lost);
      sub.on('message', (_channel: string, message: string) => onMessage(message));
      sub.on('ready', () => {
        sub.subscribe(channel).then(subscribed, (err: unknown) => {
          this.#logger.warn('redis: could not subscribe; retrying on the next connection', { event: 'redis', error: (err as Error).message });
          sub.disconnect(true);
        });
      });
    };
    const client = this.#client;
    if (!('nodes' in client)) {
      const sub = client.duplicate({ connectionName: 'hypergate-sub', autoResubscribe: false });
      this.#subscribers.push(sub);
      listen(sub);
      return;
    }
    clusterSubscription(client, this.#config, listen, () => this.#closed, this.#subscribers);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const client of [this.#client, ...this.#subscribers]) client.disconnect(false);
  }

  #refuse<T>(op: RedisOp, reason: RedisUnavailable['reason']): Promise<T> {
    this.#metrics.call(op, reason === 'breaker' ? 'rejected' : reason === 'timeout' ? 'timeout' : 'down', 0);
    return Promise.reject(new RedisUnavailable(reason));
  }

  #connect(config: RedisConfig, name: string): RedisClient {
    const options: RedisOptions = {
      connectionName: name,
      connectTimeout: config.connectTimeoutMs,
      // No offline queue and no re-sending: a request never waits for a reconnect, and nothing
      // written for it runs later, when it no longer matters.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      // Reconnect for ever, quickly at first: 100 ms, 200 ms, ... then once a second.
      retryStrategy: (times) => Math.min(times * 100, 1000),
      // Commands made in one tick go out in one write: under load a socket write (a system call,
      // most of a tier hit's CPU in a profile) is shared by many requests.
      enableAutoPipelining: true,
    };
    const client = makeClient(config, options);
    client.on('ready', () => {
      this.#reported = false;
      // Through Sentinel, the address is the master's it was given: read off the socket.
      const address = 'nodes' in client || client.stream === undefined ? null : `${client.stream.remoteAddress ?? ''}:${client.stream.remotePort ?? ''}`;
      if (address !== null && this.#address !== null && address !== this.#address) this.#masterChanges++;
      this.#address = address;
      const at = address === null || this.topology !== 'sentinel' ? '' : ` (master at ${address})`;
      this.#logger.info(`redis connected: ${this.#where}${at}`, { event: 'redis', up: true, topology: this.topology });
      // Loaded ahead, so the first calls after a (re)start do not pay a NOSCRIPT round trip; a
      // Redis restarted empty while we stayed connected is still handled by script(). (On a
      // cluster this reaches one node; script() sends a script whole to a node that lacks it.)
      for (const script of SCRIPTS) client.script('LOAD', script.lua).catch(() => {});
    });
    client.on('error', (err: Error) => this.#problem(err.message));
    client.on('close', () => {
      if (client === this.#client && !this.#closed) this.#problem('connection closed');
    });
    return client;
  }

  /** Logs a connection problem once (a Redis that stays down is retried every second). */
  #problem(what: string): void {
    if (this.#closed || this.#reported) return;
    this.#reported = true;
    this.#everDown = true;
    // ioredis' messages name the address (ECONNREFUSED 127.0.0.1:6379), never the credentials.
    this.#logger.warn(`redis unavailable (${what}); serving without it: ${this.#where}`, { event: 'redis', up: false });
  }
}
