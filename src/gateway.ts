import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveKeySource, type KeySource } from './auth/keys.ts';
import { TokenVerifier } from './auth/verifier.ts';
import { ResponseCache } from './cache/response-cache.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config/types.ts';
import type { GatewayContext } from './context.ts';
import { handleClientError } from './http/client-error.ts';
import { CorsPolicy } from './http/cors.ts';
import { createDispatcher, type DrainState } from './http/dispatch.ts';
import { createRouter } from './http/router.ts';
import { silentLogger, type Logger } from './observability/logger.ts';
import { Access } from './resources/access.ts';
import { apiRootRoutes } from './resources/api-root.ts';
import { customerCollectionRoutes } from './resources/customer-collection.ts';
import { customerRoutes } from './resources/customers.ts';
import { ResourceKit } from './resources/kit.ts';
import { openApiRoutes } from './resources/openapi.ts';
import { orderRoutes } from './resources/orders.ts';
import type { RouteDef } from './http/router.ts';
import { startSampleUpstream, type SampleUpstream } from './sample-upstream/server.ts';
import { UpstreamClient } from './upstream/client.ts';

export interface GatewayDeps {
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export interface Gateway {
  readonly server: Server;
  readonly config: Config;
  readonly keySource: KeySource;
  /** The upstream in use: the configured one, or the embedded sample service's loopback URL. */
  readonly upstreamUrl: string;
  readonly embeddedUpstream: boolean;
  readonly cache: ResponseCache;
  readonly verifier: TokenVerifier;
  /** The routes the router answers (and the OpenAPI document describes). */
  readonly routes: readonly RouteDef[];
  /** Starts listening on server.host:server.port; resolves with the bound address. */
  listen(): Promise<AddressInfo>;
  /** Stops accepting, lets in-flight requests finish for up to drainTimeoutMs, then closes everything. */
  close(drainTimeoutMs?: number): Promise<void>;
}

/** The one way to build a gateway: main.ts, tests and benchmarks all call this. */
export async function createGateway(config: Config, deps: GatewayDeps = {}): Promise<Gateway> {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const keySource = await resolveKeySource(config.auth);
  await keySource.warm().catch((err: unknown) => {
    // The key server may come up after us; verification retries on first use.
    logger.warn('could not fetch the JWKS at start-up', { error: (err as Error).message });
  });

  let sample: SampleUpstream | null = null;
  if (config.upstream.url === null) sample = await startSampleUpstream(config.sampleUpstream.customers);
  const upstreamUrl = config.upstream.url ?? (sample as SampleUpstream).url;

  const verifier = new TokenVerifier(config.auth, keySource, clock);
  const cache = new ResponseCache(config.cache);
  const upstream = new UpstreamClient(config.upstream, upstreamUrl);
  const ctx: GatewayContext = { config, clock, logger, verifier, cache, upstream };
  const kit = new ResourceKit(ctx);
  const access = new Access(ctx);
  // One table for the router and the OpenAPI document, so the document lists exactly what answers.
  const routes: RouteDef[] = [
    ...apiRootRoutes(ctx, kit, access),
    ...customerCollectionRoutes(ctx, kit, access),
    ...customerRoutes(ctx, kit, access),
    ...orderRoutes(ctx, kit, access),
  ];
  routes.push(...openApiRoutes(ctx, kit, access, () => routes));
  const router = createRouter(routes);

  const { server: s } = config;
  const drainState: DrainState = { draining: false };
  const server = createServer(
    {
      maxHeaderSize: s.maxHeaderBytes,
      headersTimeout: s.headersTimeoutMs,
      requestTimeout: s.requestTimeoutMs,
      keepAliveTimeout: s.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, s.headersTimeoutMs),
    },
    createDispatcher(router, logger, { maxUrlBytes: s.maxUrlBytes }, config.cors.origins.length > 0 ? new CorsPolicy(config.cors) : null, drainState),
  );
  server.on('clientError', handleClientError);

  let closing: Promise<void> | null = null;

  return {
    server,
    config,
    keySource,
    upstreamUrl,
    embeddedUpstream: sample !== null,
    cache,
    verifier,
    routes: router.routes,
    listen: () =>
      new Promise<AddressInfo>((resolve, reject) => {
        server.once('error', reject);
        server.listen(s.port, s.host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: (drainTimeoutMs = s.drainTimeoutMs) => {
      drainState.draining = true;
      closing ??= drain(server, drainTimeoutMs).then(async () => {
        await upstream.close();
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
