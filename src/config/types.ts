import type { FIELD_TYPES, PARAM_TYPES, WRITE_AND_READ_METHODS } from './resource-schema.ts';
import type { ROUTE_METHODS } from './route-schema.ts';
import type { ValueOf } from './rule.ts';
import type { CONFIG_SCHEMA, JWS_ALGORITHMS, LOG_LEVELS } from './schema.ts';

export type { HeaderValue } from './rule.ts';

/**
 * The validated, frozen configuration: read off the schema (schema.ts), where each key's type,
 * default, unit and meaning are written. The names below are its parts, for the code that takes one.
 */
export type Config = ValueOf<typeof CONFIG_SCHEMA>;

export type ServerConfig = Config['server'];
/** One upstream service (the `upstream` section, and each of `upstreams.<name>`). */
export type UpstreamConfig = Config['upstream'];
/** A circuit breaker's keys (upstream.breaker, redis.breaker). */
export type BreakerConfig = UpstreamConfig['breaker'];
export type AuthConfig = Config['auth'];
export type CacheConfig = Config['cache'];
/** A resource declared in config; compiled once by src/resources/compile.ts. */
export type ResourceConfig = Config['resources'][string];
export type CollectionConfig = NonNullable<ResourceConfig['collection']>;
export type OwnerConfig = NonNullable<ResourceConfig['owner']>;
/** A pass-through route declared in config; compiled once by src/passthrough/compile.ts. */
export type RouteConfig = Config['routes'][string];
/** One declared query parameter (resources.<name>.query, collection.query). */
export type QueryParamConfig = ResourceConfig['query'][string];
/** How an upstream pages (collection.paging). */
export type PagingConfig = NonNullable<CollectionConfig['paging']>;
export type IdempotencyConfig = Config['idempotency'];
export type RateLimitConfig = Config['rateLimit'];
export type CorsConfig = Config['cors'];
export type LogConfig = Config['log'];
export type RedisConfig = Config['redis'];
export type AdminConfig = Config['admin'];

export type JwsAlgorithm = (typeof JWS_ALGORITHMS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type ParamTypeName = (typeof PARAM_TYPES)[number];
export type FieldTypeName = (typeof FIELD_TYPES)[number];
export type WriteOrReadMethod = (typeof WRITE_AND_READ_METHODS)[number];
export type RouteMethodName = (typeof ROUTE_METHODS)[number];
/** plans.<name>: a rate and quotas per subject. */
export type PlanConfig = Config['plans'][string];
export type QuotaConfig = PlanConfig['quotas'][number];
export type QuotaPeriod = QuotaConfig['per'];
/** A limit of one route per subject (resources.<name>.rateLimit, writeRateLimit, routes.<name>.rateLimit). */
export type RouteLimitConfig = NonNullable<ResourceConfig['rateLimit']>;
