import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdminBackend, PurgeResult, ReloadResult } from '../admin/backend.ts';
import { inspectionOf } from '../admin/inspection.ts';
import { createAdminServer, listenAdmin } from '../admin/server.ts';
import { authorize } from '../auth/authenticate.ts';
import type { KeySource } from '../auth/keys.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { Config } from '../config/types.ts';
import { ConfigError } from '../config/validate.ts';
import { drain, listenOn } from '../http/lifecycle.ts';
import { buildPipeline, type Pipeline, type PipelineParts } from './pipeline.ts';
import { createPublicServer } from './public-server.ts';
import { purgeCache } from './purge.ts';
import { Readiness, type ReadinessCheck } from './readiness.ts';
import { changedKeys, Reloader, restartRequired } from './reload.ts';
import type { DrainState } from '../http/dispatch.ts';
import type { RouteDef } from '../protocol/route.ts';
import { silentLogger, type Logger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { loadTracing } from '../observability/tracing.ts';
import { RequestIds } from '../observability/request-id.ts';
import { startSampleUpstream, type SampleUpstream } from '../sample-upstream/server.ts';
import { runsEmbeddedSample } from '../config/embedded-sample.ts';
import { createSharedState } from '../cluster/create.ts';
import type { SharedState } from '../cluster/shared-state.ts';

export type { PurgeResult, ReloadResult } from '../admin/backend.ts';
export type { ReadinessCheck } from './readiness.ts';

export interface GatewayDeps {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Default: a new registry with process metrics. */
  readonly metrics?: Metrics;
  /**
   * Reads the config again from where it came from (file and environment), throwing ConfigError:
   * what reloadFromSource() (SIGHUP) and the admin POST /reload apply. Without it there is no
   * POST /reload.
   */
  readonly reread?: () => Config;
  /**
   * How long a connection whose last answer refused what the client may still be sending (a body
   * refused before it was read, bytes that are not HTTP) stays open, reading and dropping it, before
   * it is cut. Default 5 s (LINGER_MS, nginx's lingering_timeout); tests shorten it.
   */
  readonly lingerMs?: number;
  /**
   * The key that seals paging cursors while paging.cursorSecret is null. Default: random bytes made
   * now, so cursors last as long as this gateway; a cluster primary gives its workers one key.
   */
  readonly cursorKey?: Buffer;
}

export interface Gateway {
  readonly server: Server;
  /** The admin listener, or null when admin.port is null. */
  readonly adminServer: Server | null;
  /** The config in force (it changes on reload). */
  readonly config: Config;
  readonly keySource: KeySource;
  /**
   * The default service's base URL: the configured one, or the embedded sample service's loopback
   * URL; null when it is unset and no resource reads from it.
   */
  readonly upstreamUrl: string | null;
  readonly embeddedUpstream: boolean;
  readonly cache: ResponseCache;
  readonly verifier: TokenVerifier;
  readonly metrics: Metrics;
  /** What this instance shares with the others (Redis), or keeps alone (no redis.url). */
  readonly shared: SharedState;
  /** The routes the router answers (and the OpenAPI document describes). */
  readonly routes: readonly RouteDef[];
  /** Starts listening on server.host:server.port (and the admin listener); resolves with the public address. */
  listen(): Promise<AddressInfo>;
  /** The admin listener's address once listening, else null. */
  adminAddress(): AddressInfo | null;
  /** null when ready, else why not (the body of /readyz). */
  readiness(): string | null;
  /** What a ready /readyz says besides "ready": stale signing keys, failing services not marked critical. */
  readinessWarnings(): string[];
  /** The hook for other parts (e.g. a circuit breaker) to hold readiness back. */
  addReadinessCheck(name: string, check: ReadinessCheck): void;
  /**
   * Drops what is cached for one public path (an item in every format, its collection's pages and
   * what lies below it; a collection's pages), or every entry, on every instance sharing Redis; a
   * path no route answers rejects with a 404.
   */
  purge(path: string | null): Promise<PurgeResult>;
  /**
   * Applies a new validated config without closing the listeners or any connection: new keys,
   * verifier, upstream client and routes; the cache is kept when its settings did not change.
   * A JWKS that cannot be fetched keeps the keys in use (`keysKept`); throws (and keeps the old
   * config) when a new key file cannot be loaded or a new JWKS URL cannot be fetched.
   */
  reload(next: Config): Promise<ReloadResult>;
  /**
   * Rereads the config (deps.reread) and reloads it, one reload at a time, logging the outcome;
   * throws HG_ERR_RELOAD_INVALID_CONFIG listing the problems when it changes nothing (see Reloader).
   */
  reloadFromSource(): Promise<ReloadResult>;
  /** Stops accepting, lets in-flight requests finish for up to drainTimeoutMs, then closes everything. */
  close(drainTimeoutMs?: number): Promise<void>;
}

/** The one way to build a gateway: main.ts, tests and benchmarks all call this. */
export async function createGateway(initial: Config, deps: GatewayDeps = {}): Promise<Gateway> {
  const metrics = deps.metrics ?? new Metrics();
  const logger = deps.logger ?? silentLogger;
  const drainState: DrainState = { draining: false };

  const clock = deps.clock ?? systemClock;
  let sample: SampleUpstream | null = null;
  if (runsEmbeddedSample(initial)) sample = await startSampleUpstream(initial.sampleUpstream.customers);
  // Made once, from the config the gateway starts with (redis.* needs a restart); never waits for Redis.
  const shared = createSharedState(initial, clock, logger, metrics);
  // Made once (tracing.* needs a restart); null when off, and then OpenTelemetry is never loaded.
  const tracing = await loadTracing(initial.tracing, metrics);
  const parts: PipelineParts = {
    clock,
    logger,
    metrics,
    ids: new RequestIds(),
    drainState,
    upstreamUrlOf: (config) => config.upstream.url ?? sample?.url ?? null,
    shared,
    tunnels: new Set(),
    cursorKey: deps.cursorKey ?? randomBytes(32),
    tracing,
  };

  let current: Pipeline;
  try {
    current = await buildPipeline(initial, null, parts);
  } catch (err) {
    // A bad key file or algorithm list fails the build: the embedded upstream must not outlive it.
    await sample?.close();
    await shared.close();
    await tracing?.shutdown();
    throw err;
  }
  // The config generation the admin API shows: 1 at start, one more per reload applied.
  let generation = 1;
  let appliedAt = clock.now();
  shared.attach(() => current.cache);
  metrics.setCacheEntriesSource(() => current.cache.size);
  metrics.setTokenCacheBytesSource(() => current.verifier.cachedBytes);
  metrics.setJwksAgeSource(() => current.keySource.remote?.ageSeconds() ?? Number.NaN);
  // Each breaker belongs to its service's client, which a reload keeps unless that service changed.
  metrics.setBreakerStateSource(() => current.services.breakerStates());
  metrics.setTargetHealthSource(() => current.services.targetHealth());
  metrics.setLogDroppedSource(() => logger.droppedLines?.() ?? 0);

  const publicServer = createPublicServer(initial.server, current.dispatch, deps.lingerMs);
  publicServer.setUpgrades(current.websocket);
  const { server } = publicServer;
  const readiness = new Readiness(() => current);
  let closing: Promise<void> | null = null;

  const purge = (path: string | null): Promise<PurgeResult> => purgeCache(shared, current.table, path, current.config.redis.connectTimeoutMs);

  async function reload(next: Config): Promise<ReloadResult> {
    const previous = current;
    if (sample === null && runsEmbeddedSample(next)) {
      throw new ConfigError(['upstream.url: cannot switch to the embedded sample upstream on reload; restart instead']);
    }
    const pipeline = await buildPipeline(next, previous, parts);
    // Swap the listener: requests already running finish on the old pipeline, new ones use the new.
    publicServer.setDispatch(pipeline.dispatch);
    publicServer.setUpgrades(pipeline.websocket);
    current = pipeline;
    generation += 1;
    appliedAt = clock.now();
    publicServer.apply(next.server);
    logger.setLevel?.(next.log.level);
    // Pool.close waits for the requests it is serving, then closes its connections.
    previous.services.closeUnusedBy(pipeline.services);
    previous.passthrough.closeUnusedBy(pipeline.passthrough);
    return {
      changed: changedKeys(previous.config, next),
      restartRequired: restartRequired(previous.config, next, initial, sample !== null),
      // Said only when it happened: POST /reload answers this object as it is.
      ...(pipeline.keysKept === null ? {} : { keysKept: true, keysKeptReason: pipeline.keysKept }),
    };
  }
  const { reread } = deps;
  const noSource = (): Config => {
    throw new Error('no config source to reread: createGateway was built without deps.reread');
  };
  const reloader = new Reloader(reread ?? noSource, reload, logger);
  const reloadFromSource = (): Promise<ReloadResult> => reloader.run();

  const backend: AdminBackend = {
    readiness: () => ({ reason: readiness.reason(), warnings: readiness.warnings() }),
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.text() }),
    authorize: (req) => authorize(req, { verifier: current.verifier, auth: current.config.auth }, current.config.admin.scope),
    purge,
    apiKeys: () => {
      const settings = current.config.auth.apiKeys;
      return !settings.redis || shared.apiKeys === null ? null : { store: shared.apiKeys, prefix: settings.prefix };
    },
    reload: reread === undefined ? undefined : reloadFromSource,
    inspection: inspectionOf(() => ({
      config: current.config,
      table: current.table,
      routes: current.routes,
      passthrough: current.passthroughRoutes,
      generation,
      appliedAt,
    })),
  };
  const adminServer = initial.admin.port === null ? null : createAdminServer(backend, logger);

  return {
    server,
    adminServer,
    get config() {
      return current.config;
    },
    get keySource() {
      return current.keySource;
    },
    get upstreamUrl() {
      return parts.upstreamUrlOf(current.config);
    },
    embeddedUpstream: sample !== null,
    get cache() {
      return current.cache;
    },
    get verifier() {
      return current.verifier;
    },
    metrics,
    shared,
    get routes() {
      return current.routes;
    },
    listen: async () => {
      const address = await listenOn(server, initial.server.port, initial.server.host);
      if (adminServer !== null && initial.admin.port !== null) {
        try {
          await listenAdmin(adminServer, initial.admin.host, initial.admin.port);
        } catch (err) {
          server.close();
          // Says which of the two addresses failed (main.ts names it).
          throw Object.assign(err as Error, { where: `${initial.admin.host}:${initial.admin.port} (admin listener)` });
        }
      }
      return address;
    },
    adminAddress: () => (adminServer?.listening ? (adminServer.address() as AddressInfo) : null),
    readiness: () => readiness.reason(),
    readinessWarnings: () => readiness.warnings(),
    addReadinessCheck: (name, check) => readiness.addCheck(name, check),
    purge,
    reload,
    reloadFromSource,
    close: (drainTimeoutMs = current.config.server.drainTimeoutMs) => {
      drainState.draining = true;
      readiness.closing = true;
      // WebSocket tunnels are no longer node:http's connections: the drain time-out cuts them apart.
      const cutTunnels = (): void => {
        for (const socket of parts.tunnels) socket.destroy();
      };
      closing ??= drain(server, drainTimeoutMs, cutTunnels).then(async () => {
        publicServer.sweeper.stop();
        if (adminServer !== null) await drain(adminServer, 0);
        await current.services.close();
        await current.passthrough.close();
        await shared.close();
        if (sample !== null) await sample.close();
        // Sends what is queued, within tracing.exporter.timeoutMs.
        await tracing?.shutdown();
      });
      return closing;
    },
  };
}
