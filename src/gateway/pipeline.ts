import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { KeySource } from '../auth/keys.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import { sameValue } from '../lib/same-value.ts';
import type { Config, UpstreamConfig } from '../config/types.ts';
import type { GatewayContext } from '../resources/context.ts';
import { clientAddressRule } from '../protocol/client-address.ts';
import { CorsPolicy } from '../http/cors.ts';
import { createDispatcher, type DrainState } from '../http/dispatch.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import type { HgResponse } from '../protocol/response.ts';
import { createRouter } from '../http/router.ts';
import type { RouteDef } from '../protocol/route.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RequestIds } from '../observability/request-id.ts';
import type { Tracing } from '../observability/tracing.ts';
import { Access } from '../resources/access.ts';
import { apiRootRoutes } from '../resources/api-root.ts';
import { compileResources, type ResourceTable } from '../resources/compile.ts';
import { servingParts } from '../resources/serving-parts.ts';
import { openApiRoutes } from '../openapi/routes.ts';
import { CursorSeal } from '../resources/cursor-seal.ts';
import { headerValueOf } from '../config/service-checks.ts';
import { readRoutes } from '../resources/read-routes.ts';
import { embedding } from '../embedding/hook.ts';
import { writeRoutes } from '../resources/write-routes.ts';
import type { SharedState } from '../cluster/shared-state.ts';
import { compileRoutes, type CompiledRoute } from '../passthrough/compile.ts';
import { PassthroughServices } from '../passthrough/pools.ts';
import { passthroughRoutes } from '../passthrough/routes.ts';
import { UpstreamServices } from '../upstream/services.ts';
import { buildAuth } from './auth.ts';
import { buildApiKeys } from './api-keys.ts';
import type { ApiKeyAuthenticator } from '../auth/api-keys/authenticator.ts';
import { credentialRealm } from '../auth/realm.ts';
import { carryRateLimitFields } from '../protocol/rate-limit-fields.ts';
import { buildLimits, type Limits } from './limits.ts';

/** Everything that depends on the config; rebuilt on reload, parts kept when their settings did not change. */
export interface Pipeline {
  readonly config: Config;
  readonly keySource: KeySource;
  readonly verifier: TokenVerifier;
  /** API keys accepted beside tokens (auth.apiKeys); null: none. */
  readonly apiKeys: ApiKeyAuthenticator | null;
  /** Null when the keys are as fetched for this pipeline; else why the previous ones were kept (reload). */
  readonly keysKept: string | null;
  readonly cache: ResponseCache;
  /** One client per upstream service. */
  readonly services: UpstreamServices;
  /** The limiter every route takes from (the plans', over the one without plans), or null. */
  readonly limiter: Limiter | null;
  /** The limiter without plans (rateLimit.requestsPerSecond), kept across reloads that leave rateLimit as it was. */
  readonly baseLimiter: Limiter | null;
  /** Plans and limits per route. */
  readonly limits: Limits;
  /** The compiled resource table the routes, API root, OpenAPI document and purge read. */
  readonly table: ResourceTable;
  readonly routes: readonly RouteDef[];
  readonly dispatch: (req: IncomingMessage, res: HgResponse) => void;
  /** The pools of the services pass-through routes use (apart from the resources' clients). */
  readonly passthrough: PassthroughServices;
  /** The compiled pass-through routes the router's pass-through entries were built from. */
  readonly passthroughRoutes: readonly CompiledRoute[];
  /** Some pass-through route tunnels WebSockets: the server hands upgrade requests to `dispatch`. */
  readonly websocket: boolean;
}

/** What every pipeline of one gateway shares, whatever its config. */
export interface PipelineParts {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly ids: RequestIds;
  readonly drainState: DrainState;
  /**
   * The default service's base URL a config means (the embedded sample service's when upstream.url
   * is null and it runs); null when unset and no resource reads from it.
   */
  readonly upstreamUrlOf: (config: Config) => string | null;
  /** What instances share; made once, from the config the gateway started with. */
  readonly shared: SharedState;
  /** The client sockets of open WebSocket tunnels, whichever pipeline opened them: a shutdown cuts them. */
  readonly tunnels: Set<Duplex>;
  /** The key that seals paging cursors while paging.cursorSecret is null: made once per gateway (or given for all of a cluster's workers). */
  readonly cursorKey: Buffer;
  /** The tracer (tracing.enabled), made once per gateway; null when off. */
  readonly tracing: Tracing | null;
}

/** What a write waits for when there are no other instances to tell. */
const DONE: Promise<null> = Promise.resolve(null);

/**
 * Builds the request pipeline for `config`: keys and verifier (see buildAuth), cache, upstream client, rate
 * limiter, the route table, router and dispatcher. `previous` (on reload) lends the parts whose
 * settings did not change, so a reload keeps cached entries, pooled connections and rate buckets.
 */
export async function buildPipeline(config: Config, previous: Pipeline | null, parts: PipelineParts): Promise<Pipeline> {
  const { clock, logger, metrics, upstreamUrlOf } = parts;
  const { keySource, verifier, keysKept, claims } = await buildAuth(config, previous, {
    clock,
    logger,
    tokens: metrics.tokens,
    jwks: metrics.jwks,
    introspection: metrics,
  });
  const apiKeys = await buildApiKeys(config, { shared: parts.shared, claims, clock, tally: metrics.apiKeys });
  // Cached entries were rendered under the old declarations, Vary (CORS) and upstreams; a change
  // there, or to the cache's own settings, starts an empty cache rather than serve them.
  const renderedAlike =
    previous !== null &&
    sameValue(previous.config.cache, config.cache) &&
    sameValue(previous.config.resources, config.resources) &&
    sameValue(previous.config.cors, config.cors) &&
    sameValue(previous.config.upstreams, config.upstreams) &&
    upstreamUrlOf(previous.config) === upstreamUrlOf(config);
  const cache = renderedAlike ? previous.cache : new ResponseCache(config.cache, metrics.cache);
  const urlOf = (name: string, service: UpstreamConfig): string | null => (name === 'upstream' ? upstreamUrlOf(config) : service.url);
  const services = UpstreamServices.build(config, previous?.services ?? null, urlOf, metrics, clock, claims);
  const realm = credentialRealm(config.auth);
  // The buckets survive a reload that leaves rateLimit and the realm as they were, so a reload resets no client's limit.
  const base =
    previous !== null && sameValue(previous.config.rateLimit, config.rateLimit) && credentialRealm(previous.config.auth) === realm
      ? previous.baseLimiter
      : parts.shared.limiter(config.rateLimit, realm);
  // Plans and limits per route over it; without them, `base` alone, as it always was.
  const limits = buildLimits(config, base, realm, previous?.limits ?? null, { shared: parts.shared, registry: metrics.registry, logger });
  const limiter = limits.limiter;
  const ctx: GatewayContext = {
    config,
    clock,
    logger,
    verifier,
    cache,
    metrics,
    shared: parts.shared,
    tier: parts.shared.tier(cache, config),
    traced: parts.tracing !== null,
  };
  // A configured secret is checked at start (set, and at least 32 bytes): see cross-key-checks.ts.
  const secret = config.paging.cursorSecret === null ? undefined : headerValueOf(config.paging.cursorSecret, process.env);
  const serving = servingParts(ctx, new CursorSeal(secret === undefined ? parts.cursorKey : Buffer.from(secret, 'utf8')));
  // One rule for whom a request is from, so rate limits and the access log agree behind a proxy.
  const clientAddress = clientAddressRule(config.server.trustProxy);
  const access = new Access(ctx, limiter, clientAddress, apiKeys, limits.fields ? limits.forRoute : undefined);
  const table = compileResources(config, services, claims);
  // One table for the router and the OpenAPI document, so the document lists exactly what answers.
  // Embedded parts are read as their links would be; they take from the rate limit only when the operator says so.
  const partAccess = config.embedding.partsCountAgainstRateLimit || limiter === null ? access : new Access(ctx, null, clientAddress);
  const embed = embedding({ config, table, access, partAccess, formats: serving.formats, clock });
  const routes: RouteDef[] = [...apiRootRoutes(ctx, serving, access, table), ...readRoutes(table, serving, access, embed)];
  // A write's invalidation reaches every instance (shared state), as a purge does.
  routes.push(
    ...writeRoutes(table, {
      ctx,
      parts: serving,
      access,
      idempotency: parts.shared.idempotency,
      realm,
      invalidate: (keys, groups) => parts.shared.invalidate(keys, groups).instances ?? DONE,
    }),
  );
  // Pass-through routes: separate router entries, so nothing of them is on a resource's path.
  const passthrough = PassthroughServices.build(config, services, urlOf, claims, previous?.passthrough ?? null);
  const compiledRoutes = compileRoutes(config);
  routes.push(
    ...passthroughRoutes(compiledRoutes, {
      verifier,
      auth: config.auth,
      limiter,
      clientAddress,
      apiKeys,
      ...(limits.fields ? { limiterOf: (route: CompiledRoute) => limits.forRoute(`route:${route.name}`, config.routes[route.name]?.rateLimit ?? null) } : {}),
      services: passthrough,
      observer: metrics,
      tunnels: parts.tunnels,
    }),
  );
  routes.push(...openApiRoutes(ctx, serving, access, () => routes, table));
  const router = createRouter(routes, metrics.requests);
  const cors = config.cors.origins.length > 0 ? new CorsPolicy(config.cors) : null;
  const dispatched = createDispatcher(
    router,
    logger,
    { maxUrlBytes: config.server.maxUrlBytes, maxHeaderCount: config.server.maxHeaderCount, requestTimeoutMs: config.server.requestTimeoutMs },
    cors,
    parts.drainState,
    {
      metrics,
      accessLog: config.log.access,
      ids: parts.ids,
      clientAddress,
      tracing: parts.tracing,
    },
  );
  // With plans or limits per route, a passing answer carries the RateLimit fields of the limits it passed.
  const dispatch = limits.fields
    ? (req: IncomingMessage, res: HgResponse): void => {
        carryRateLimitFields(req, res);
        dispatched(req, res);
      }
    : dispatched;
  return {
    config,
    keySource,
    verifier,
    apiKeys,
    keysKept,
    cache,
    services,
    limiter,
    baseLimiter: base,
    limits,
    table,
    routes: router.routes,
    dispatch,
    passthrough,
    passthroughRoutes: compiledRoutes,
    websocket: compiledRoutes.some((r) => r.websocket),
  };
}
