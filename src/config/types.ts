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
  /**
   * Addresses and CIDR ranges of proxies whose X-Forwarded-For is believed (client-address.ts);
   * empty: the client is always the connection's peer.
   */
  readonly trustProxy: readonly string[];
  /** Worker processes (node:cluster); "auto" means one per core. 1 runs no cluster at all. */
  readonly workers: number | 'auto';
}

export interface UpstreamConfig {
  /** Base URL of the customer service; null starts the embedded sample service. */
  readonly url: string | null;
  /** One deadline for connect + headers + whole body, in ms. */
  readonly timeoutMs: number;
  /** Most connections (and so concurrent requests) to the upstream. */
  readonly connections: number;
  readonly maxResponseBytes: number;
  readonly breaker: BreakerConfig;
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
  readonly tokenCacheMaxEntries: number;
  readonly jwksCooldownMs: number;
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
}

export interface ResourceConfig {
  /** Upstream fields exposed beyond id, name and status (data exposure is opt-in). */
  readonly exposeFields: readonly string[];
}

/** Token buckets per token subject (or client address), per instance. */
export interface RateLimitConfig {
  /** Refill rate of each bucket; null or 0 turns rate limiting off. */
  readonly requestsPerSecond: number | null;
  /** Bucket size: requests a client may make at once before the rate applies. */
  readonly burst: number;
  /** Most subjects (and, apart, most client addresses) tracked; the least recently seen go first. */
  readonly maxKeys: number;
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
  readonly upstream: UpstreamConfig;
  readonly auth: AuthConfig;
  readonly cache: CacheConfig;
  readonly resources: { readonly customers: ResourceConfig; readonly orders: ResourceConfig };
  readonly rateLimit: RateLimitConfig;
  readonly cors: CorsConfig;
  readonly sampleUpstream: { readonly customers: number };
  readonly log: LogConfig;
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
  /** Scope a token needs for the admin write operations (cache purge). */
  readonly scope: string;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
