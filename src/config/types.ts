/** The validated, frozen configuration. Every key is documented in README.md ("Configuration"). */
export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  /** How long SIGTERM waits for in-flight requests before closing sockets, in ms. */
  readonly drainTimeoutMs: number;
  /** Time allowed to receive a request head, in ms (slowloris guard). */
  readonly headersTimeoutMs: number;
  /** Time allowed to receive a whole request, in ms. */
  readonly requestTimeoutMs: number;
  /** Idle time before a kept-alive connection is closed, in ms; 0 never. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Time an answer may go without any of it being written to the client before its connection is
   * closed, in ms (nginx's send_timeout: between two writes, not for the whole answer); 0 never.
   */
  readonly sendTimeoutMs: number;
  /** Upper bound on the request head (request line + headers), in bytes; over it: 431. */
  readonly maxHeaderBytes: number;
  /** Longest request target accepted, in bytes; over it: 414. */
  readonly maxUrlBytes: number;
  /** Most header fields in one request; over it: 431 (Node alone would drop the rest silently). */
  readonly maxHeaderCount: number;
  /** Largest request body a write may carry, in bytes; over it: 413, refused while it streams. */
  readonly maxBodyBytes: number;
  /**
   * Addresses and CIDR ranges of proxies whose X-Forwarded-For is believed (client-address.ts);
   * empty: the client is always the connection's peer.
   */
  readonly trustProxy: readonly string[];
  /** Worker processes (node:cluster); "auto" means one per core. 1 runs no cluster at all. */
  readonly workers: number | 'auto';
  /**
   * Path of a file holding the pid of the process that handles SIGHUP (the primary with workers),
   * written at start and removed at a clean exit; null writes none.
   */
  readonly pidFile: string | null;
}

/** A header value written in the file, or read from an environment variable at start (secrets). */
export type HeaderValue = string | { readonly env: string };

/** One upstream service (the `upstream` section, and each of `upstreams.<name>`). */
export interface UpstreamConfig {
  /** Base URL of the service; null (the default service only) starts the embedded sample service. */
  readonly url: string | null;
  /** One deadline for connect + headers + whole body, in ms. */
  readonly timeoutMs: number;
  /** Most connections (and so concurrent requests) to the upstream. */
  readonly connections: number;
  readonly maxResponseBytes: number;
  readonly breaker: BreakerConfig;
  /** Send the client's Authorization header on to this service (default false: never forwarded). */
  readonly forwardAuthorization: boolean;
  /** Fixed headers added to every request to this service. */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** Header name → token claim: the claim's value (a string or number) goes to the service in that header. */
  readonly forwardClaims: Readonly<Record<string, string>>;
}

/** The upstream circuit breaker (README "Failure behaviour"). */
export interface BreakerConfig {
  /** Consecutive failed upstream requests that open the breaker; 0 never opens it. */
  readonly failures: number;
  /** How long an open breaker fails requests fast before one probe may pass, in ms. */
  readonly cooldownMs: number;
}

export type JwsAlgorithm =
  | 'HS256' | 'HS384' | 'HS512'
  | 'RS256' | 'RS384' | 'RS512'
  | 'PS256' | 'PS384' | 'PS512'
  | 'ES256' | 'ES384' | 'ES512'
  | 'EdDSA' | 'Ed25519';

export interface AuthConfig {
  readonly jwksUrl: string | null;
  readonly jwksFile: string | null;
  readonly publicKeyFile: string | null;
  readonly secret: string | null;
  /** Allow-list; null means "follow the key type". */
  readonly algorithms: readonly JwsAlgorithm[] | null;
  readonly issuer: string | null;
  readonly audience: string | null;
  readonly clockToleranceSeconds: number;
  readonly requiredScope: string;
  readonly maxTokenBytes: number;
  /** Most verified tokens kept. */
  readonly tokenCacheMaxEntries: number;
  /** Most bytes the verified-token cache may hold (each token's length plus what its principal keeps), in bytes. */
  readonly tokenCacheMaxBytes: number;
  /** Longest token that is cached, in bytes; longer ones are verified on every request (0: none cached). */
  readonly tokenCacheMaxTokenBytes: number;
  /** Least time between two JWKS fetches, whatever asks for them (start-up and reload excepted), in ms. */
  readonly jwksCooldownMs: number;
  /** One deadline per JWKS fetch covering connect, head and the whole body, in ms. */
  readonly jwksTimeoutMs: number;
  /** Largest JWKS answer accepted, in bytes; a longer one is cut while it streams. */
  readonly jwksMaxBytes: number;
  readonly devKeyDir: string;
  /** Claim naming the one customer a token may read (e.g. "customer_id"); null turns ownership off. */
  readonly ownerClaim: string | null;
  /** Scope that lifts the ownership rule (and is required for the collection when ownership is on). */
  readonly readAnyScope: string;
}

export interface CacheConfig {
  readonly maxAgeSeconds: number;
  readonly maxEntries: number;
  readonly maxBytes: number;
  /** How long after expiry an entry may still answer when the upstream fails, in s (0: never). */
  readonly staleIfErrorSeconds: number;
  /** How long after expiry an entry answers at once while a background refresh runs, in s (0: off). */
  readonly staleWhileRevalidateSeconds: number;
  /** How long the upstream's 404 for an item or collection is remembered, in s (0: not cached). */
  readonly notFoundSeconds: number;
  /** Ask Redis before the upstream on a local miss, and share what was fetched; null: on when redis.url is set. */
  readonly shared: boolean | null;
}

export type ParamTypeName = 'integer' | 'string';
export type FieldTypeName = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';

/** A resource declared in config (README "Declaring resources"); compiled once by src/resources/compile.ts. */
export interface ResourceConfig {
  /** Public path template of one item, e.g. "/api/products/{sku}". */
  readonly path: string;
  /** The type of each path parameter. */
  readonly params: Readonly<Record<string, ParamTypeName>>;
  /** Upstream path template of one item, over the same parameters. */
  readonly upstream: string;
  /** Name of the upstream service: "upstream" (the default section) or a key of `upstreams`. */
  readonly service: string;
  /** JSON pointer (RFC 6901) to the record in the upstream's answer; "" is the whole body. */
  readonly record: string;
  /** Fields copied into the representation, in this order; each must be present (else 502). */
  readonly fields: readonly string[];
  /** Types some fields must have (else 502), e.g. {"name": "string"}. */
  readonly fieldTypes: Readonly<Record<string, FieldTypeName>>;
  /** Further fields copied when present (data exposure is opt-in). */
  readonly exposeFields: readonly string[];
  /** Relation → path template; names resolve to path parameters, then to record fields. */
  readonly links: Readonly<Record<string, string>>;
  /** Relation of the item template in the API root's links; null: not linked from the root. */
  readonly rel: string | null;
  /** The noun for one item in problem codes and messages; null: rel, else the resource's name. */
  readonly singular: string | null;
  readonly collection: CollectionConfig | null;
  /** Scope a token needs to read it; null: auth.requiredScope. */
  readonly scope: string | null;
  /** A token reads only items whose parameter equals its claim (unless it has auth.readAnyScope). */
  readonly owner: OwnerConfig | null;
  /** Overrides cache.maxAgeSeconds for this resource. */
  readonly maxAgeSeconds: number | null;
  /** Methods it takes: GET (and so HEAD) and the writes; POST on the collection, the others on an item. */
  readonly methods: readonly WriteOrReadMethod[];
  /** Scope a write needs; null: "<name>:write". */
  readonly writeScope: string | null;
  /** PUT, PATCH and DELETE without If-Match are refused with 428 before anything is sent. */
  readonly requireIfMatch: boolean;
  /** "required": a POST without Idempotency-Key is a 400. */
  readonly idempotency: 'optional' | 'required';
  /** Path of a JSON Schema (draft 2020-12) file request bodies are validated against; null: none. */
  readonly schema: string | null;
}

export type WriteOrReadMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Idempotency-Key records (draft-ietf-httpapi-idempotency-key-header). */
export interface IdempotencyConfig {
  /** How long a final answer is kept for replay, in seconds. */
  readonly ttlSeconds: number;
  /** Most records kept (per instance, without Redis); the least recently used go first. */
  readonly maxEntries: number;
  /** Most bytes the records of one instance hold (without Redis), answers included; the least recently used go first. */
  readonly maxBytes: number;
}

export interface OwnerConfig {
  /** Token claim naming what the token owns; null: auth.ownerClaim (then no rule while that is null). */
  readonly claim: string | null;
  /** The path parameter compared with the claim. */
  readonly param: string;
}

export interface CollectionConfig {
  /** Public path template of the collection, e.g. "/api/products". */
  readonly path: string;
  /** Upstream path template of the collection. */
  readonly upstream: string;
  /** JSON pointer to the array of records. */
  readonly items: string;
  /** JSON pointer to the total count; null: none (no total field, no last link). */
  readonly total: string | null;
  /** offset/limit paging (README "Collections"). */
  readonly paged: boolean;
  /**
   * Store each item of an answer as the item itself, so following its self link is a cache hit;
   * false when the upstream's list holds abbreviated records (then each item is read on its own).
   */
  readonly cacheItems: boolean;
  /** Relation → path template over the collection path's parameters. */
  readonly links: Readonly<Record<string, string>>;
}

/** Token buckets per token subject (or client address), per instance. */
export interface RateLimitConfig {
  /** Refill rate of each bucket; null or 0 turns rate limiting off. */
  readonly requestsPerSecond: number | null;
  /** Bucket size: requests a client may make at once before the rate applies. */
  readonly burst: number;
  /** Most subjects (and, apart, most client addresses) tracked; the least recently seen go first. */
  readonly maxKeys: number;
  /** "instance": each instance limits on its own; "cluster": one limit in Redis; null: cluster when redis.url is set. */
  readonly scope: 'instance' | 'cluster' | null;
}

/** Shared state across instances (README "Running many instances"). */
export interface RedisConfig {
  /** redis:// or rediss:// URL, credentials allowed; null: no Redis. */
  readonly url: string | null;
  /** Prefix of every key and channel, so several gateways can share one Redis. */
  readonly keyPrefix: string;
  /** The most a request waits for one Redis call, in ms; past it the request goes on without Redis. */
  readonly timeoutMs: number;
  /** Time allowed to open a connection, in ms (also the admin purge's wait for its broadcast). */
  readonly connectTimeoutMs: number;
  /** Consecutive failed calls that stop calling Redis for cooldownMs (ms), then one probe. */
  readonly breaker: BreakerConfig;
}

export interface CorsConfig {
  /** Allowed browser origins ("https://app.example.com", or "*" for any); empty turns CORS off. */
  readonly origins: readonly string[];
  /** How long a browser may cache a preflight answer, in seconds (Access-Control-Max-Age). */
  readonly maxAgeSeconds: number;
  /** Response header names a script may read, added to the defaults (cors.ts EXPOSED_HEADERS). */
  readonly exposeHeaders: readonly string[];
  /** Request header names a browser may send, added to the defaults (cors.ts ALLOWED_HEADERS). */
  readonly allowHeaders: readonly string[];
}

export interface Config {
  readonly server: ServerConfig;
  /** The default upstream service, named "upstream". */
  readonly upstream: UpstreamConfig;
  /** Further upstream services by name. */
  readonly upstreams: Readonly<Record<string, UpstreamConfig>>;
  readonly auth: AuthConfig;
  readonly cache: CacheConfig;
  /** Declared resources by name (a null entry in a file removes a shipped one and is gone here). */
  readonly resources: Readonly<Record<string, ResourceConfig>>;
  readonly idempotency: IdempotencyConfig;
  readonly rateLimit: RateLimitConfig;
  readonly cors: CorsConfig;
  readonly sampleUpstream: { readonly customers: number };
  readonly log: LogConfig;
  readonly redis: RedisConfig;
  readonly admin: AdminConfig;
}

export interface LogConfig {
  readonly level: LogLevel;
  /** One JSON access-log line per request. */
  readonly access: boolean;
  /**
   * Most bytes of log lines waiting for a slow reader of stdout, in bytes (per process); lines
   * past it are dropped and counted (hypergate_log_lines_dropped_total). Fixed at start.
   */
  readonly maxBufferBytes: number;
}

/** The operations listener: health, readiness, metrics, cache purge. Never the public port. */
export interface AdminConfig {
  readonly host: string;
  /** null: no admin listener. */
  readonly port: number | null;
  /** Scope a token needs for the admin write operations (cache purge, reload). */
  readonly scope: string;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
