import { createServer, IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminServer, listenAdmin, type AdminBackend } from './admin/server.ts';
import { authorize } from './auth/authenticate.ts';
import { resolveKeySource, type KeySource } from './auth/keys.ts';
import { TokenVerifier } from './auth/verifier.ts';
import { ResponseCache } from './cache/response-cache.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config/types.ts';
import type { GatewayContext } from './context.ts';
import { handleClientError, refuseConnect } from './http/client-error.ts';
import { CorsPolicy } from './http/cors.ts';
import { createDispatcher, type DrainState } from './http/dispatch.ts';
import { KeepAliveSweeper } from './http/keep-alive.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { HgRequest, HgResponse } from './http/response.ts';
import { createRouter, type RouteDef } from './http/router.ts';
import { silentLogger, type Logger } from './observability/logger.ts';
import { Metrics } from './observability/metrics.ts';
import { RequestIds } from './observability/request-id.ts';
import { customerPath } from './resources/customer-representation.ts';
import { Access } from './resources/access.ts';
import { apiRootRoutes } from './resources/api-root.ts';
import { customerCollectionRoutes } from './resources/customer-collection.ts';
import { customerRoutes } from './resources/customers.ts';
import { ResourceKit } from './resources/kit.ts';
import { openApiRoutes } from './resources/openapi.ts';
import { orderRoutes } from './resources/orders.ts';
import { startSampleUpstream, type SampleUpstream } from './sample-upstream/server.ts';
import { UpstreamClient } from './upstream/client.ts';

export interface GatewayDeps {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Default: a new registry with process metrics. */
  readonly metrics?: Metrics;
}

/** A readiness check: null when fine, else the reason this instance should get no traffic. */
export type ReadinessCheck = () => string | null;

export interface ReloadResult {
  /** Keys whose new value needs a restart to take effect (listening addresses, workers). */
  readonly restartRequired: readonly string[];
}

export interface Gateway {
  readonly server: Server;
  /** The admin listener, or null when admin.port is null. */
  readonly adminServer: Server | null;
  /** The config in force (it changes on reload). */
  readonly config: Config;
  readonly keySource: KeySource;
  /** The upstream in use: the configured one, or the embedded sample service's loopback URL. */
  readonly upstreamUrl: string;
  readonly embeddedUpstream: boolean;
  readonly cache: ResponseCache;
  readonly verifier: TokenVerifier;
  readonly metrics: Metrics;
  /** The routes the router answers (and the OpenAPI document describes). */
  readonly routes: readonly RouteDef[];
  /** Starts listening on server.host:server.port (and the admin listener); resolves with the public address. */
  listen(): Promise<AddressInfo>;
  /** The admin listener's address once listening, else null. */
  adminAddress(): AddressInfo | null;
  /** null when ready, else why not (the body of /readyz). */
  readiness(): string | null;
  /** The hook for other parts (e.g. a circuit breaker) to hold readiness back. */
  addReadinessCheck(name: string, check: ReadinessCheck): void;
  /** Drops cached entries of one customer (all its representations), or every entry. */
  purge(customerId: number | null): number;
  /**
   * Applies a new validated config without closing the listeners or any connection: new keys,
   * verifier, upstream client and routes; the cache is kept when its settings did not change.
   * Throws (and keeps the old config) when the new keys cannot be loaded.
   */
  reload(next: Config): Promise<ReloadResult>;
  /** Stops accepting, lets in-flight requests finish for up to drainTimeoutMs, then closes everything. */
  close(drainTimeoutMs?: number): Promise<void>;
}

/** Everything that depends on the config; rebuilt on reload. */
interface Pipeline {
  readonly config: Config;
  readonly keySource: KeySource;
  readonly verifier: TokenVerifier;
  readonly cache: ResponseCache;
  readonly upstream: UpstreamClient;
  readonly limiter: RateLimiter | null;
  readonly routes: readonly RouteDef[];
  readonly dispatch: (req: IncomingMessage, res: HgResponse) => void;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The one way to build a gateway: main.ts, tests and benchmarks all call this. */
export async function createGateway(initial: Config, deps: GatewayDeps = {}): Promise<Gateway> {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const metrics = deps.metrics ?? new Metrics();
  const ids = new RequestIds();
  const drainState: DrainState = { draining: false };

  let sample: SampleUpstream | null = null;
  if (initial.upstream.url === null) sample = await startSampleUpstream(initial.sampleUpstream.customers);
  const upstreamUrlOf = (config: Config): string => config.upstream.url ?? (sample as SampleUpstream).url;

  async function buildPipeline(config: Config, previous: Pipeline | null): Promise<Pipeline> {
    const keySource = await resolveKeySource(config.auth);
    const verifier = new TokenVerifier(config.auth, keySource, clock, metrics.tokens);
    verifier.keysLoaded = keySource.mode !== 'jwks-url';
    await keySource.warm().then(
      () => {
        verifier.keysLoaded = true;
      },
      (err: unknown) => {
        // The key server may come up after us; verification retries on first use, /readyz says why.
        logger.warn('could not fetch the JWKS', { event: 'jwks', error: (err as Error).message });
      },
    );
    // Cached entries were rendered under the old exposed fields, Vary (CORS) and upstream; a
    // change there, or to the cache's own settings, starts an empty cache rather than serve them.
    const renderedAlike =
      previous !== null &&
      same(previous.config.cache, config.cache) &&
      same(previous.config.resources, config.resources) &&
      same(previous.config.cors, config.cors) &&
      upstreamUrlOf(previous.config) === upstreamUrlOf(config);
    const cache = renderedAlike ? previous.cache : new ResponseCache(config.cache, metrics.cache);
    const upstream =
      previous !== null && same(previous.config.upstream, config.upstream) && upstreamUrlOf(previous.config) === upstreamUrlOf(config)
        ? previous.upstream
        : new UpstreamClient(config.upstream, upstreamUrlOf(config), metrics, clock);
    // The buckets survive a reload that leaves rateLimit as it was, so a reload resets no client's limit.
    const limiter = previous !== null && same(previous.config.rateLimit, config.rateLimit) ? previous.limiter : RateLimiter.create(config.rateLimit, clock);
    const ctx: GatewayContext = { config, clock, logger, verifier, cache, upstream, metrics };
    const kit = new ResourceKit(ctx);
    const access = new Access(ctx, limiter);
    // One table for the router and the OpenAPI document, so the document lists exactly what answers.
    const routes: RouteDef[] = [
      ...apiRootRoutes(ctx, kit, access),
      ...customerCollectionRoutes(ctx, kit, access),
      ...customerRoutes(ctx, kit, access),
      ...orderRoutes(ctx, kit, access),
    ];
    routes.push(...openApiRoutes(ctx, kit, access, () => routes));
    const router = createRouter(routes, metrics.requests);
    const cors = config.cors.origins.length > 0 ? new CorsPolicy(config.cors) : null;
    const dispatch = createDispatcher(router, logger, { maxUrlBytes: config.server.maxUrlBytes, maxHeaderCount: config.server.maxHeaderCount }, cors, drainState, { metrics, accessLog: config.log.access, ids });
    return { config, keySource, verifier, cache, upstream, limiter, routes: router.routes, dispatch };
  }

  let current: Pipeline;
  try {
    current = await buildPipeline(initial, null);
  } catch (err) {
    // A bad key file or algorithm list fails the build: the embedded upstream must not outlive it.
    await sample?.close();
    throw err;
  }
  metrics.setCacheEntriesSource(() => current.cache.size);
  // The breaker belongs to the upstream client, which a reload keeps unless upstream.* changed.
  metrics.setBreakerStateSource(() => current.upstream.breaker.state);

  const { server: s } = initial;
  const server = createServer<typeof HgRequest, typeof HgResponse>({
    IncomingMessage: HgRequest,
    ServerResponse: HgResponse,
    maxHeaderSize: s.maxHeaderBytes,
    headersTimeout: s.headersTimeoutMs,
    requestTimeout: s.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, s.headersTimeoutMs),
    // Node's own answer to a missing Host is a bare 400; the dispatcher answers it with a problem.
    requireHostHeader: false,
    // Repeated fields arrive joined ("a, b", RFC 9110 section 5.3) rather than all but the first
    // dropped, so a second Host is seen (400) and list fields like If-None-Match keep every member.
    joinDuplicateHeaders: true,
  });
  // Node drops header fields past maxHeadersCount without a word; keeping one more lets the
  // dispatcher see that the request went over server.maxHeaderCount and answer 431.
  server.maxHeadersCount = s.maxHeaderCount + 1;
  // server.keepAliveTimeoutMs, without Node's per-request timer (see keep-alive.ts).
  const keepAlive = new KeepAliveSweeper(server, s.keepAliveTimeoutMs);
  server.on('request', current.dispatch);
  server.on('clientError', handleClientError);
  server.on('connect', refuseConnect);
  // Left alone, Node answers "Expect: 100-continue" with 100 Continue, inviting a body no route
  // takes, and any other expectation with a bare 417. Both go to the dispatcher instead: no 100
  // is sent (RFC 9110 section 10.1.1 lets a server answer at once), a body gets its 413.
  const expecting = (req: IncomingMessage, res: HgResponse): void => current.dispatch(req, res);
  server.on('checkContinue', expecting);
  server.on('checkExpectation', expecting);

  let closing: Promise<void> | null = null;
  const checks = new Map<string, ReadinessCheck>();
  // An open breaker means this instance would only fail misses fast: send traffic elsewhere.
  checks.set('upstream', () => (current.upstream.breaker.state === 'open' ? 'the circuit breaker is open (the customer service is failing)' : null));
  let warming: Promise<void> | null = null;

  const readiness = (): string | null => {
    if (closing !== null) return 'shutting down';
    if (!current.verifier.keysLoaded) {
      // Try again in the background; the next probe sees the result.
      const { verifier, keySource } = current;
      warming ??= keySource.warm().then(
        () => {
          verifier.keysLoaded = true;
        },
        () => {},
      ).finally(() => {
        warming = null;
      });
      return 'the signing keys are not loaded yet (JWKS not fetched)';
    }
    for (const [name, check] of checks) {
      const reason = check();
      if (reason !== null) return `${name}: ${reason}`;
    }
    return null;
  };

  const purge = (customerId: number | null): number => {
    if (customerId === null) return current.cache.clear();
    const path = customerPath(customerId);
    // Every representation of the customer: the path itself and anything keyed below or beside it.
    return current.cache.deleteWhere((key) => key === path || (key.startsWith(path) && '/?#;'.includes(key.charAt(path.length))));
  };

  const backend: AdminBackend = {
    readiness,
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.text() }),
    authorize: (req) => authorize(req, current.verifier, current.config.auth, current.config.admin.scope),
    purge: async (id) => purge(id),
  };
  const adminServer = initial.admin.port === null ? null : createAdminServer(backend, logger);

  async function reload(next: Config): Promise<ReloadResult> {
    const previous = current;
    if (sample === null && next.upstream.url === null) {
      throw new Error('upstream.url: cannot switch to the embedded sample upstream on reload; restart instead');
    }
    const pipeline = await buildPipeline(next, previous);
    const restartRequired: string[] = [];
    // maxHeaderBytes is handed to each connection's parser when it is created.
    for (const key of ['host', 'port', 'workers', 'maxHeaderBytes'] as const) {
      if (!same(previous.config.server[key], next.server[key])) restartRequired.push(`server.${key}`);
    }
    if (!same(previous.config.admin.host, next.admin.host) || !same(previous.config.admin.port, next.admin.port)) restartRequired.push('admin.host/admin.port');
    if (sample !== null && next.upstream.url === null && next.sampleUpstream.customers !== initial.sampleUpstream.customers) restartRequired.push('sampleUpstream.customers');
    // Swap the listener: requests already running finish on the old pipeline, new ones use the new.
    server.off('request', previous.dispatch);
    server.on('request', pipeline.dispatch);
    current = pipeline;
    server.headersTimeout = next.server.headersTimeoutMs;
    server.requestTimeout = next.server.requestTimeoutMs;
    keepAlive.setTimeout(next.server.keepAliveTimeoutMs);
    server.maxHeadersCount = next.server.maxHeaderCount + 1;
    logger.setLevel?.(next.log.level);
    if (pipeline.upstream !== previous.upstream) {
      // Pool.close waits for the requests it is serving, then closes its connections.
      previous.upstream.close().catch(() => {});
    }
    return { restartRequired };
  }

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
      return upstreamUrlOf(current.config);
    },
    embeddedUpstream: sample !== null,
    get cache() {
      return current.cache;
    },
    get verifier() {
      return current.verifier;
    },
    metrics,
    get routes() {
      return current.routes;
    },
    listen: async () => {
      const address = await new Promise<AddressInfo>((resolve, reject) => {
        server.once('error', reject);
        server.listen(s.port, s.host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
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
    readiness,
    addReadinessCheck: (name, check) => {
      checks.set(name, check);
    },
    purge,
    reload,
    close: (drainTimeoutMs = current.config.server.drainTimeoutMs) => {
      drainState.draining = true;
      closing ??= drain(server, drainTimeoutMs).then(async () => {
        keepAlive.stop();
        if (adminServer !== null) await drain(adminServer, 0);
        await current.upstream.close();
        if (sample !== null) await sample.close();
      });
      return closing;
    },
  };
}

/**
 * Stops accepting and waits for in-flight requests. Connections that finish their request become
 * idle and are closed at once (rather than after keep-alive), and the drain time-out cuts the rest.
 */
function drain(server: Server, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const sweep = setInterval(() => server.closeIdleConnections(), 25);
    const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}
