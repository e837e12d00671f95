import { MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { RESOURCE } from './resource-schema.ts';
import { PLAN } from './plan-schema.ts';
import { ROUTE } from './route-schema.ts';
import { boolean, headerValue, integer, list, map, nonEmptyString, path, redisUrl, section, string, strings, url } from './rule.ts';
import { SHIPPED_RESOURCES } from './shipped-resources.ts';
import { DEFAULT_SERVICE, MAX_MS, NAMED_SERVICE } from './upstream-schema.ts';

export type { Rule } from './rule.ts';

export const JWS_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

const MiB = 1024 * 1024;

const SERVER = section({
  host: nonEmptyString({ default: '127.0.0.1', doc: 'Address to listen on (`0.0.0.0` for all interfaces).' }),
  port: integer({ min: 0, max: 65535, default: 8080, doc: 'Port to listen on; `0` picks a free one.' }),
  drainTimeoutMs: integer({
    min: 0,
    max: MAX_MS,
    unit: 'ms',
    default: 10_000,
    doc: 'On SIGTERM/SIGINT, how long in-flight requests may take; then connections are cut and the process exits (code 1 when requests were cut).',
  }),
  headersTimeoutMs: integer({
    min: 1,
    max: MAX_MS,
    unit: 'ms',
    default: 10_000,
    doc: 'Time allowed to receive a request head (slowloris guard); at most `server.requestTimeoutMs`.',
  }),
  requestTimeoutMs: integer({
    min: 1,
    max: MAX_MS,
    unit: 'ms',
    default: 30_000,
    doc: "Time allowed to receive a whole request, from its first byte; over it: 408. A write's body is held to it exactly: one that completes later is never written upstream.",
  }),
  keepAliveTimeoutMs: integer({
    min: 0,
    max: MAX_MS,
    unit: 'ms',
    default: 5000,
    doc: 'Idle time before a keep-alive connection is closed (checked every fifth of it, but no more often than every 50 ms and no less often than every second; 0 keeps idle connections open).',
  }),
  sendTimeoutMs: integer({
    min: 0,
    max: MAX_MS,
    unit: 'ms',
    default: 60_000,
    doc: "Time an answer may go without any of it reaching the client before its connection is closed (nginx's `send_timeout`: counted between two writes, not for the whole answer; checked by the keep-alive sweep); `0` never. See [Client input and limits](errors.md#client-input-and-limits).",
  }),
  maxHeaderBytes: integer({ min: 1024, max: MiB, unit: 'bytes', default: 16_384, doc: 'Largest request head (request line and headers); over it: 431.' }),
  maxUrlBytes: integer({ min: 64, max: MiB, unit: 'bytes', default: 8192, doc: 'Longest request target; over it: 414.' }),
  maxHeaderCount: integer({
    min: 8,
    max: 10_000,
    default: 100,
    doc: 'Most header fields in one request; over it: 431 (Node alone would drop the rest silently).',
  }),
  maxBodyBytes: integer({
    min: 1,
    max: 64 * MiB,
    unit: 'bytes',
    default: 65_536,
    doc: 'Largest request body a write may carry; over it: 413, refused as soon as the declared length or the streamed bytes pass it, the rest never read.',
  }),
  maxBodyDepth: integer({
    min: 1,
    max: MAX_JSON_DEPTH,
    default: 64,
    doc: 'Deepest nesting of arrays and objects in a write\'s body, the body\'s own object being level 1 (`{"a":[1]}` is 2); deeper: 400 `invalid-body`, and nothing is sent upstream. At most 1000, the deepest the gateway renders.',
  }),
  // Each entry is checked across keys (an IP address or a CIDR range).
  trustProxy: strings({
    default: [],
    doc: 'Addresses and CIDR ranges (`"10.0.0.0/8"`, `"fd00::/8"`) of proxies whose `X-Forwarded-For` is believed, for the client address of the access log and the rate limits (see [Logs](operations.md#logs)). Empty: the client is always the connection\'s peer.',
  }),
  workers: integer({ min: 1, max: 256, orWord: 'auto', default: 1, doc: 'Worker processes (node:cluster); `"auto"` is one per core. `1` runs no cluster.' }),
  pidFile: path({
    nullable: true,
    default: null,
    doc: 'File the process that handles SIGHUP (the primary with workers) writes its pid to at start and removes at a clean exit, for supervisors; `null` writes none. Needs a restart to change.',
  }),
});

const AUTH = section({
  jwksUrl: url({ nullable: true, default: null, doc: 'Remote JWKS key source.' }),
  jwksFile: path({ nullable: true, default: null, doc: 'Local JWKS file key source.' }),
  publicKeyFile: path({ nullable: true, default: null, doc: 'PEM public key (or certificate) key source.' }),
  secret: nonEmptyString({
    nullable: true,
    secret: true,
    default: null,
    doc: 'HMAC secret key source (≥ 32 bytes; needs an HS algorithm in `auth.algorithms`). Never shown in a problem or a log line.',
  }),
  algorithms: strings({
    nullable: true,
    nonEmpty: true,
    oneOf: JWS_ALGORITHMS,
    default: null,
    doc: 'Allowed JWS algorithms. `null` follows the key type (JWKS: all asymmetric ones). `none` is never allowed.',
  }),
  issuer: nonEmptyString({ nullable: true, default: null, doc: 'Required `iss`, when set.' }),
  audience: nonEmptyString({ nullable: true, default: null, doc: 'Required `aud`, when set.' }),
  clockToleranceSeconds: integer({ min: 0, max: 3600, unit: 's', default: 5, doc: 'Leeway for `exp` and `nbf`.' }),
  requiredScope: nonEmptyString({
    default: 'customers:read',
    doc: 'Scope a token needs for the API root, the OpenAPI document and every resource that names no `scope`.',
  }),
  maxTokenBytes: integer({ min: 64, max: 65_536, unit: 'bytes', default: 8192, doc: 'Longest bearer token; longer is refused before any parsing (400).' }),
  tokenCacheMaxEntries: integer({ min: 1, max: 10_000_000, default: 100_000, doc: 'Most tokens in the verified-token cache.' }),
  tokenCacheMaxBytes: integer({
    min: 64 * 1024,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    default: 64 * MiB,
    doc: 'Most bytes the verified-token cache holds (64 MiB; each token is charged its subject, the claims owner rules and forwardClaims read, and 256 bytes, whatever its length: 100,000 tokens fit).',
  }),
  // 0 caches no token: every request is verified.
  tokenCacheMaxTokenBytes: integer({
    min: 0,
    max: 65_536,
    unit: 'bytes',
    default: 4096,
    doc: 'Longest token that is cached; longer ones are verified on every request. `0` caches none.',
  }),
  jwksCooldownMs: integer({
    min: 0,
    max: MAX_MS,
    unit: 'ms',
    default: 30_000,
    doc: 'Least time between two JWKS fetches, whatever asks for them (unknown `kid`s, readiness probes, a key set older than 10 minutes); start-up and reload fetch at once.',
  }),
  jwksTimeoutMs: integer({
    min: 1,
    max: 60_000,
    unit: 'ms',
    default: 5000,
    doc: 'One deadline per JWKS fetch over connect, head and the whole body; over it the fetch failed (the last good key set stays in use).',
  }),
  jwksMaxBytes: integer({
    min: 1024,
    max: 64 * MiB,
    unit: 'bytes',
    default: MiB,
    doc: 'Largest JWKS answer (1 MiB); a longer one is cut while it streams and the fetch failed.',
  }),
  devKeyDir: path({
    default: '.hypergate/dev-keys',
    doc: 'Where dev mode keeps its key pair (the default is in the package folder, whatever the working directory).',
  }),
  ownerClaim: nonEmptyString({
    nullable: true,
    default: null,
    doc: 'The claim of every owner rule that names none: in the shipped config, the one customer a token may read (e.g. `"customer_id"`, a number or canonical digits) and that customer\'s orders; `null` turns those rules off.',
  }),
  readAnyScope: nonEmptyString({
    default: 'customers:read:any',
    doc: 'Scope that lifts owner rules; a collection whose path lacks the owner parameter requires it.',
  }),
  introspection: section({
    url: url({
      nullable: true,
      default: null,
      doc: 'Token introspection endpoint (RFC 7662) of the identity provider: a bearer token that is not a JWT is sent there (a POST with HTTP Basic client credentials). `null`: such a token is a 401. See [Opaque tokens](authentication.md#opaque-tokens-introspection).',
    }),
    clientId: headerValue({
      nullable: true,
      default: null,
      doc: 'The gateway\'s client id at the introspection endpoint: `{"env": "VARIABLE"}` (read at start) or a string; never shown. Required with `auth.introspection.url`.',
    }),
    clientSecret: headerValue({
      nullable: true,
      default: null,
      doc: 'The gateway\'s client secret at the introspection endpoint: `{"env": "VARIABLE"}` (read at start; keep it out of the file); never shown. Required with `auth.introspection.url`.',
    }),
    timeoutMs: integer({
      min: 1,
      max: 60_000,
      unit: 'ms',
      default: 2000,
      doc: 'One deadline per introspection call over connect, head and the whole body; over it the call failed (503 with `Retry-After`, never 401).',
    }),
    maxBytes: integer({
      min: 1024,
      max: MiB,
      unit: 'bytes',
      default: 65_536,
      doc: 'Largest introspection answer; a longer one is cut while it streams and the call failed.',
    }),
    maxCacheSeconds: integer({
      min: 0,
      max: 86_400,
      unit: 's',
      default: 300,
      doc: "Longest an active answer is kept (never past the token's `exp`); a token revoked at the identity provider is accepted at most this long. `0` asks on every request.",
    }),
    inactiveCacheSeconds: integer({
      min: 0,
      max: 3600,
      unit: 's',
      default: 10,
      doc: 'How long an inactive answer is kept, so a bad token repeated is refused (401) without asking again. `0` keeps none.',
    }),
    planField: nonEmptyString({
      nullable: true,
      default: null,
      doc: "The field of an active introspection answer that names the caller's plan (a string); `null`: introspected tokens name no plan.",
    }),
    breaker: section({
      failures: integer({
        min: 0,
        max: 1_000_000,
        default: 5,
        doc: 'Consecutive failed introspection calls (refused, time-out, 5xx, a malformed answer) that open its circuit breaker; `0` never opens it.',
      }),
      cooldownMs: integer({
        min: 1,
        max: MAX_MS,
        unit: 'ms',
        default: 5000,
        doc: 'How long the open breaker answers tokens that need introspection with 503 at once before one probe call may pass.',
      }),
    }),
  }),
  apiKeys: section({
    file: path({
      nullable: true,
      default: null,
      doc: 'JSON file of consumers and the SHA-256 (hex) of their keys, read at start and on reload; `null`: none. See [API keys](authentication.md#api-keys).',
    }),
    header: nonEmptyString({
      nullable: true,
      default: null,
      doc: 'Request header that carries the key (e.g. `"X-Api-Key"`); `null`: `Authorization: ApiKey <key>`. Never a query parameter.',
    }),
    prefix: nonEmptyString({ default: 'hg_', doc: 'Prefix of every key (1 to 16 letters, digits or `_`), so a key is recognised where it leaks.' }),
    redis: boolean({
      default: false,
      doc: 'Keys made through the admin API (`/api-keys`) are kept in Redis (needs `redis.url`) and accepted by every instance. API keys are accepted when this or `file` is set.',
    }),
  }),
  planClaim: nonEmptyString({
    nullable: true,
    default: null,
    doc: "The claim naming a token's plan (a key of `plans`); `null`: tokens name none and take `rateLimit.defaultPlan`. See [Plans](authentication.md#plans-and-limits-per-route).",
  }),
});

const CACHE = section({
  maxAgeSeconds: integer({
    min: 0,
    max: 31_536_000,
    unit: 's',
    default: 60,
    doc: 'Freshness lifetime of a cached representation, and the `max-age` clients are told.',
  }),
  maxEntries: integer({ min: 1, max: 10_000_000, default: 100_000, doc: 'Most resources kept (one entry holds each format asked for).' }),
  maxBytes: integer({
    min: 1024,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    default: 64 * MiB,
    doc: 'Most bytes the cached resources take in memory (64 MiB): bodies (as kept in memory: a body with a character past U+00FF at two bytes a character) and paths plus the measured bookkeeping of each entry (180 bytes) and each format (200 bytes).',
  }),
  // A day at most for each: an expired entry still takes cache room.
  staleIfErrorSeconds: integer({
    min: 0,
    max: 86_400,
    unit: 's',
    default: 300,
    doc: 'How long after expiry an entry may still answer (200, its true `Age`) when the upstream fails; `0` never.',
  }),
  staleWhileRevalidateSeconds: integer({
    min: 0,
    max: 86_400,
    unit: 's',
    default: 0,
    doc: 'How long after expiry an entry answers at once while one background request refreshes it; `0` switches this off.',
  }),
  notFoundSeconds: integer({
    min: 0,
    max: 86_400,
    unit: 's',
    default: 5,
    doc: "How long the upstream's 404 for an item (or a collection below an item) is remembered, so repeated reads of an unknown id do not each reach the upstream; `0` asks every time. A write that creates the item, or a purge, drops it.",
  }),
  shared: boolean({
    nullable: true,
    default: null,
    doc: 'The second cache tier in Redis: a local miss asks Redis before the upstream, and what is fetched is shared with the other instances (see [Running many instances](operations.md#running-many-instances)). `null`: on when `redis.url` is set; `true` needs `redis.url`.',
  }),
});

const IDEMPOTENCY = section({
  ttlSeconds: integer({
    min: 1,
    max: 30 * 86_400,
    unit: 's',
    default: 86_400,
    doc: "How long a write's final answer is kept for replay under its `Idempotency-Key`.",
  }),
  maxEntries: integer({
    min: 1,
    max: 10_000_000,
    default: 100_000,
    doc: 'Idempotency records kept in memory when there is no Redis (the least recently used go first); in Redis each record lives for its TTL.',
  }),
  maxBytes: integer({
    min: 65_536,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    default: 32 * MiB,
    doc: "Most bytes those records hold in memory (32 MiB; each counts its answer's body and headers plus 200 B), so large answers cannot grow the process past it; the least recently used go first.",
  }),
  maxBytesPerSubject: integer({
    min: 65_536,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    default: MiB,
    doc: "Most bytes one token subject's records hold of those (1 MiB; at most `idempotency.maxBytes`): a subject past it loses its own oldest records (its newest is always kept), so one user's many large answers never evict another user's record, whose retry would then make its change again. Without Redis only.",
  }),
});

const RATE_LIMIT = section({
  requestsPerSecond: integer({
    min: 0,
    max: 1_000_000,
    nullable: true,
    default: null,
    doc: 'Requests per second each token subject (or client address, for requests without a valid token) may make, per instance or across the cluster (`rateLimit.scope`); over it: 429. `null` or `0`: off.',
  }),
  burst: integer({ min: 1, max: 1_000_000, default: 20, doc: "Requests a client may make at once before the rate applies (the token bucket's size)." }),
  maxKeys: integer({
    min: 1,
    max: 10_000_000,
    default: 100_000,
    doc: 'Most subjects, and apart most client addresses, tracked; the least recently seen are dropped first.',
  }),
  scope: string({
    nullable: true,
    oneOf: ['instance', 'cluster'],
    default: null,
    doc: '`"instance"`: each instance limits on its own (N instances allow N times the rate); `"cluster"`: one limit for every instance sharing `redis.url`, decided in Redis (needs `redis.url`). `null`: `"cluster"` when `redis.url` is set, else `"instance"`. Plans and limits per route follow it too.',
  }),
  defaultPlan: nonEmptyString({
    nullable: true,
    default: null,
    doc: 'The plan (a key of `plans`) of a caller whose credentials name none, or name one not declared; `null`: such callers are held to `rateLimit.requestsPerSecond` as without plans.',
  }),
  anonymousPlan: nonEmptyString({
    nullable: true,
    default: null,
    doc: 'The plan of anonymous callers (public reads without credentials), counted per client address; `null`: held to `rateLimit.requestsPerSecond` as without plans.',
  }),
});

const EMBEDDING = section({
  maxDepth: integer({ min: 1, max: 4, default: 2, doc: 'Most relations in one `embed` path (`items.customer` is 2); deeper is a 400.' }),
  maxParts: integer({
    min: 1,
    max: 10_000,
    default: 100,
    doc: 'Most distinct parts one answer may embed, over all its relations; more is a 400 before any part is read.',
  }),
  fanOutPerService: integer({ min: 1, max: 1000, default: 8, doc: 'Most part reads one answer has under way at once on one upstream service.' }),
  timeoutMs: integer({
    min: 1,
    max: 600_000,
    unit: 'ms',
    default: 5000,
    doc: "One deadline for a whole answer with `embed`; a part not read by then is left out (`reason=timeout`) or fails the answer (504) per its relation's `onError`.",
  }),
  partsCountAgainstRateLimit: boolean({
    default: false,
    doc: "`true`: each embedded part takes from the caller's rate limit as a request of its own; `false`: one answer counts once, whatever it embeds.",
  }),
});

const CORS = section({
  origins: strings({
    default: [],
    doc: 'Browser origins allowed by CORS (`"https://app.example.com"`, or `"*"` for any; the origin is echoed). Empty: CORS off.',
  }),
  maxAgeSeconds: integer({ min: 0, max: 86_400, unit: 's', default: 600, doc: '`Access-Control-Max-Age` of preflight answers.' }),
  // Header names: HTTP tokens, checked across keys.
  exposeHeaders: strings({
    default: [],
    doc: 'Response header names a browser script may read, added to `ETag, Cache-Status, Age, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location`.',
  }),
  allowHeaders: strings({
    default: [],
    doc: 'Request header names a browser may send, added to `Authorization, Accept, If-None-Match, Content-Type, If-Match, Idempotency-Key` (e.g. `X-Request-Id`).',
  }),
});

const LOG = section({
  level: string({ oneOf: LOG_LEVELS, default: 'info', doc: '`debug`, `info`, `warn`, `error` or `silent`. Logs are JSON lines on stdout (pino).' }),
  access: boolean({ default: true, doc: 'One access-log line per request (see [Logs](operations.md#logs)).' }),
  // From one pipe buffer up.
  maxBufferBytes: integer({
    min: 65_536,
    max: 1024 * MiB,
    unit: 'bytes',
    default: 4 * MiB,
    doc: 'Most bytes of log lines a process keeps waiting for a slow reader of stdout (4 MiB); lines past it are dropped and counted, never waited for (see [Logs](operations.md#logs)). Needs a restart.',
  }),
});

const REDIS = section({
  url: redisUrl({
    nullable: true,
    default: null,
    doc: '`redis://[user:password@]host[:port][/db]` or `rediss://` (TLS): the Redis (or Valkey) that instances share for invalidations, cluster rate limits, the shared cache tier and idempotency records. `null`: every instance on its own. Credentials never appear in a log line, an error or `/metrics`. See [Running many instances](operations.md#running-many-instances).',
  }),
  sentinels: list(
    section({
      host: nonEmptyString({ doc: 'Host name or IP address of one Redis Sentinel.' }),
      port: integer({ min: 1, max: 65_535, doc: 'Its port (Sentinel listens on 26379 by default).' }),
    }),
    {
      nullable: true,
      default: null,
      doc: 'Redis behind Sentinel, instead of `redis.url`: the Sentinels to ask where the master named `redis.name` is, `[{"host": "10.0.0.5", "port": 26379}, ...]`. After a failover the connections move to the new master without a restart. See [Redis that fails over](operations.md#redis-that-fails-over).',
    },
  ),
  name: nonEmptyString({
    nullable: true,
    default: null,
    doc: "The master's name in the Sentinels' configuration (`sentinel monitor <name> ...`); required with `redis.sentinels`, and only with it.",
  }),
  sentinelPassword: headerValue({
    nullable: true,
    default: null,
    doc: 'The password of the Sentinels themselves (`requirepass` in sentinel.conf), a string or `{"env": "NAME"}`; never shown. `null`: the Sentinels ask for none.',
  }),
  password: headerValue({
    nullable: true,
    default: null,
    doc: 'The password of the master and replicas reached through `redis.sentinels` (their `requirepass`), a string or `{"env": "NAME"}`; never shown. With `redis.url` or `redis.cluster` the password is in the URL.',
  }),
  cluster: strings({
    nullable: true,
    urls: true,
    default: null,
    doc: 'Redis Cluster, instead of `redis.url`: seed nodes, `["redis://10.0.0.5:6379", ...]` (credentials, if any, in the first); the rest of the cluster is learnt from them. A master lost and replaced by its replica is followed without a restart. See [Redis that fails over](operations.md#redis-that-fails-over).',
  }),
  keyPrefix: nonEmptyString({
    default: 'hypergate:',
    doc: 'Prefix of every key and of the invalidation channel, so several gateways can share one Redis. Instances sharing a prefix must declare the same resources and trust the same key source and `auth.issuer` (see [Running many instances](operations.md#running-many-instances)).',
  }),
  timeoutMs: integer({
    min: 1,
    max: 60_000,
    unit: 'ms',
    default: 20,
    doc: 'The most a request waits for one Redis call; past it the request goes on without Redis (a shared-tier miss, the local rate-limit bucket).',
  }),
  connectTimeoutMs: integer({
    min: 1,
    max: MAX_MS,
    unit: 'ms',
    default: 1000,
    doc: 'Time allowed to open a connection to Redis; also how long an admin purge waits for Redis to confirm its broadcast.',
  }),
  invalidationGraceMs: integer({
    min: 0,
    max: 600_000,
    unit: 'ms',
    default: 1000,
    doc: "While an instance cannot hear the other instances' invalidations (its subscription to Redis is down, or not made yet), how long a cached entry of a resource that takes writes (and its collection's pages) may still answer from its local cache: at most this long after the subscription was lost, or after the entry was fetched if later. Past it the entry is read again (the shared tier, or the upstream), until the subscription is back and the local cache cleared. `0`: not served from the local cache at all meanwhile. See [Running many instances](operations.md#running-many-instances).",
  }),
  breaker: section({
    failures: integer({
      min: 1,
      max: 1_000_000,
      default: 3,
      doc: 'Consecutive Redis calls that time out or lose the connection before Redis is left alone for `cooldownMs`.',
    }),
    cooldownMs: integer({
      min: 1,
      max: MAX_MS,
      unit: 'ms',
      default: 1000,
      doc: 'How long the open Redis breaker answers every call with "unavailable" at once (each caller falls back) before one probe call may pass.',
    }),
  }),
});

const PAGING = section({
  cursorSecret: headerValue({
    nullable: true,
    default: null,
    doc: 'The key of the HMAC that seals the cursors in paging links (at least 32 bytes): a string, or `{"env": "VARIABLE"}` to read it from the environment at start; never shown. Several instances behind one address must share it, or a cursor made by one is a 400 at another. `null`: a random key made when the process starts (with `server.workers` above 1, one for all its workers), so cursors last as long as the process. See [Paging styles](resources.md#paging-styles).',
  }),
});

const TRACING = section({
  enabled: boolean({
    default: false,
    doc: 'Make OpenTelemetry traces: a SERVER span per request, with child spans for the token, the cache lookup, each upstream attempt and each Redis call, exported over OTLP/HTTP. Off: no tracing code is loaded. The sampler, service name and resource attributes come from `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`, `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (see [Traces](operations.md#traces)).',
  }),
  propagators: strings({
    nonEmpty: true,
    oneOf: ['tracecontext', 'b3'],
    default: ['tracecontext'],
    doc: "How a caller's trace context is read and an upstream's written: `tracecontext` (W3C `traceparent`, `tracestate`), `b3` (the single `b3` header, and the `X-B3-*` headers when reading).",
  }),
  exporter: section({
    url: url({
      nullable: true,
      default: null,
      doc: 'Where spans are sent (OTLP/HTTP JSON, the full path, e.g. `http://collector:4318/v1/traces`). `null`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` followed by `/v1/traces`, else `http://localhost:4318/v1/traces`.',
    }),
    timeoutMs: integer({
      min: 1,
      max: 60_000,
      unit: 'ms',
      default: 10_000,
      doc: 'The most one export of a batch may take; a batch not sent by then is dropped.',
    }),
    maxQueueSize: integer({
      min: 1,
      max: 1_000_000,
      default: 2048,
      doc: 'Ended spans waiting to be exported; past it a span is dropped and counted (`hypergate_trace_spans_dropped_total`), never waited for.',
    }),
    maxExportBatchSize: integer({
      min: 1,
      max: 1_000_000,
      default: 512,
      doc: 'Spans sent in one export (a larger value is taken as `tracing.exporter.maxQueueSize`); a batch this full is sent at once.',
    }),
    scheduledDelayMs: integer({
      min: 1,
      max: MAX_MS,
      unit: 'ms',
      default: 5000,
      doc: 'The longest an ended span waits for its batch to fill before it is sent.',
    }),
  }),
  captureQuery: boolean({
    default: false,
    doc: "Put the request's query string in the SERVER span (`url.query`). Off by default: a query may carry what should not leave the gateway.",
  }),
});

const ADMIN = section({
  host: nonEmptyString({ default: '127.0.0.1', doc: 'Address of the admin listener (health, readiness, metrics, cache purge, reload).' }),
  port: integer({ min: 0, max: 65535, nullable: true, default: 9091, doc: 'Port of the admin listener; `null` switches it off. Never the public port.' }),
  scope: nonEmptyString({ default: 'hypergate:admin', doc: 'Scope a token needs for the admin cache purge and `POST /reload`.' }),
});

/**
 * The shape of the configuration, written once: each key's type, bounds, default, unit and the
 * line the configuration table shows. The validator walks this tree, the `Config` type is read off
 * it (types.ts), config/default.json and the configuration table are written from it
 * (`npm run config:docs`; a test fails when either differs). Adding a key here is all it takes to
 * add an option. Rules that span several keys are cross-key-checks.ts.
 */
export const CONFIG_SCHEMA = section({
  server: SERVER,
  upstream: DEFAULT_SERVICE,
  upstreams: map(NAMED_SERVICE, {
    default: {},
    doc: 'Further upstream services by name, for `resources.<name>.service`.',
    entryDoc:
      "The same keys as `upstream` (own pool, deadline, breaker, headers); `url` is required, every other key left out takes the shipped default of `upstream` (never the operator's `upstream` headers).",
  }),
  auth: AUTH,
  cache: CACHE,
  // A null entry removes a resource the shipped config declares.
  resources: map(RESOURCE, { nullableValues: true, default: SHIPPED_RESOURCES }),
  routes: map(ROUTE, {
    default: {},
    doc: 'Pass-through routes by name (see [routes.md](routes.md)): endpoints that are not hypermedia resources, streamed to and from an upstream service without caching or rendering.',
  }),
  idempotency: IDEMPOTENCY,
  rateLimit: RATE_LIMIT,
  plans: map(PLAN, {
    default: {},
    doc: 'Plans by name: a rate and quotas per subject, held across the cluster with Redis. A principal takes the plan its credentials name (`auth.planClaim`), else `rateLimit.defaultPlan`; anonymous callers `rateLimit.anonymousPlan`. See [Plans](authentication.md#plans-and-limits-per-route).',
  }),
  embedding: EMBEDDING,
  cors: CORS,
  sampleUpstream: section({
    customers: integer({ min: 1, max: 10_000_000, default: 100_000, doc: 'How many customers the embedded sample service has.' }),
  }),
  paging: PAGING,
  log: LOG,
  redis: REDIS,
  admin: ADMIN,
  tracing: TRACING,
});
