import type { JwsAlgorithm, LogLevel } from './types.ts';

/**
 * The shape every config file must have. The validator walks this tree, so adding a key here
 * (and to config/default.json, and to the README table) is all it takes to add an option.
 * `path` marks a file or folder: a relative value in a config file means "next to that file",
 * and in config/default.json "in the package" (load.ts resolves every marked key, whatever the cwd).
 * A problem never shows a value marked `secret`, and shows a URL's credentials as `***` (redact.ts).
 */
export type Rule = (
  /** `secret`: the value is never shown, not even in the problem about it (auth.secret; header values). */
  | { readonly kind: 'string'; readonly nullable?: boolean; readonly nonEmpty?: boolean; readonly oneOf?: readonly string[]; readonly path?: boolean; readonly secret?: boolean }
  | { readonly kind: 'integer'; readonly min: number; readonly max: number; readonly nullable?: boolean; readonly orWord?: string }
  | { readonly kind: 'boolean'; readonly nullable?: boolean }
  | { readonly kind: 'url'; readonly nullable?: boolean }
  /** A Redis URL: redis:// or rediss://, credentials allowed (never echoed: see redactUrl). */
  | { readonly kind: 'redisUrl'; readonly nullable?: boolean }
  | { readonly kind: 'strings'; readonly nullable?: boolean; readonly oneOf?: readonly string[]; readonly nonEmpty?: boolean }
  | { readonly kind: 'section'; readonly keys: Readonly<Record<string, Rule>>; readonly nullable?: boolean }
  /** An object whose keys the operator names (resources, services, headers); each value follows `values`. */
  | { readonly kind: 'map'; readonly values: Rule; readonly nullableValues?: boolean }
  /** A header value: a string, or {"env": "NAME"} read from the environment at start. */
  | { readonly kind: 'headerValue' }
) & {
  /** A key that may be left out: it then takes this value (a key without it must be present). */
  readonly optional?: { readonly default: unknown };
};

export const JWS_ALGORITHMS: readonly JwsAlgorithm[] = [
  'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512',
  'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
];
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
const MAX_MS = 24 * 60 * 60 * 1000;

const int = (min: number, max: number, nullable = false): Rule => ({ kind: 'integer', min, max, nullable });
const str = (nullable = false): Rule => ({ kind: 'string', nullable, nonEmpty: true });
/** A file or folder; see `path` above. */
const path = (nullable = false): Rule => ({ kind: 'string', nullable, nonEmpty: true, path: true });
/** The same rule, but the key may be left out and then means `value`. */
const opt = (rule: Rule, value: unknown): Rule => ({ ...rule, optional: { default: value } });
const stringMap: Rule = { kind: 'map', values: { kind: 'string', nonEmpty: true } };
/** Relation → template; a null entry removes a relation (a shipped link whose target the operator removed). */
const linkMap: Rule = { ...stringMap, nullableValues: true };

/** One upstream service: the `upstream` section (url may be null: the embedded sample) and each `upstreams.<name>`. */
function upstreamSection(urlNullable: boolean): Rule {
  return {
    kind: 'section',
    keys: {
      url: { kind: 'url', nullable: urlNullable },
      timeoutMs: int(1, MAX_MS),
      connections: int(1, 10000),
      maxResponseBytes: int(1, 1024 * 1024 * 1024),
      breaker: {
        kind: 'section',
        keys: {
          // 0 switches the breaker off (it never opens).
          failures: int(0, 1_000_000),
          cooldownMs: int(1, MAX_MS),
        },
      },
      forwardAuthorization: { kind: 'boolean' },
      headers: { kind: 'map', values: { kind: 'headerValue' } },
      forwardClaims: stringMap,
    },
  };
}

const PARAM_TYPES = ['integer', 'string'] as const;
const WRITE_AND_READ_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;

/** resources.<name>: the keys a declaration may have; what may be left out says what it then means. */
const RESOURCE: Rule = {
  kind: 'section',
  keys: {
    path: str(),
    params: { kind: 'map', values: { kind: 'string', oneOf: PARAM_TYPES } },
    upstream: str(),
    service: opt(str(), 'upstream'),
    record: opt({ kind: 'string' }, ''),
    fields: opt({ kind: 'strings' }, []),
    fieldTypes: opt({ kind: 'map', values: { kind: 'string', oneOf: FIELD_TYPES } }, {}),
    exposeFields: opt({ kind: 'strings' }, []),
    links: opt(linkMap, {}),
    rel: opt(str(true), null),
    singular: opt(str(true), null),
    collection: opt(
      {
        kind: 'section',
        nullable: true,
        keys: {
          path: str(),
          upstream: str(),
          items: opt({ kind: 'string' }, '/items'),
          total: opt({ kind: 'string', nullable: true }, null),
          paged: opt({ kind: 'boolean' }, true),
          cacheItems: opt({ kind: 'boolean' }, true),
          links: opt(linkMap, {}),
        },
      },
      null,
    ),
    scope: opt(str(true), null),
    owner: opt({ kind: 'section', nullable: true, keys: { claim: opt(str(true), null), param: str() } }, null),
    maxAgeSeconds: opt(int(0, 31_536_000, true), null),
    // Writes (README "Writes"): GET implies HEAD; POST acts on the collection, the others on an item.
    methods: opt({ kind: 'strings', nonEmpty: true, oneOf: WRITE_AND_READ_METHODS }, ['GET']),
    writeScope: opt(str(true), null),
    requireIfMatch: opt({ kind: 'boolean' }, false),
    idempotency: opt({ kind: 'string', oneOf: ['optional', 'required'] }, 'optional'),
    // A JSON Schema (draft 2020-12) file for request bodies; relative to the config file's folder.
    schema: opt(path(true), null),
  },
};

export const CONFIG_SCHEMA: Rule = {
  kind: 'section',
  keys: {
    server: {
      kind: 'section',
      keys: {
        host: str(),
        port: int(0, 65535),
        drainTimeoutMs: int(0, MAX_MS),
        headersTimeoutMs: int(1, MAX_MS),
        requestTimeoutMs: int(1, MAX_MS),
        keepAliveTimeoutMs: int(0, MAX_MS),
        // 0 switches it off.
        sendTimeoutMs: int(0, MAX_MS),
        maxHeaderBytes: int(1024, 1024 * 1024),
        maxUrlBytes: int(64, 1024 * 1024),
        maxHeaderCount: int(8, 10_000),
        // Largest request body a write may carry; over it: 413 while it streams.
        maxBodyBytes: int(1, 64 * 1024 * 1024),
        // IP addresses and CIDR ranges (checked across keys).
        trustProxy: { kind: 'strings' },
        // A number of worker processes, or "auto" for one per core (node:cluster).
        workers: { kind: 'integer', min: 1, max: 256, orWord: 'auto' },
        // Where the process that handles SIGHUP writes its pid; null writes none.
        pidFile: path(true),
      },
    },
    upstream: upstreamSection(true),
    // Each entry is merged over the shipped `upstream` defaults when the config is loaded.
    upstreams: { kind: 'map', values: upstreamSection(false) },
    auth: {
      kind: 'section',
      keys: {
        jwksUrl: { kind: 'url', nullable: true },
        jwksFile: path(true),
        publicKeyFile: path(true),
        secret: { kind: 'string', nullable: true, nonEmpty: true, secret: true },
        algorithms: { kind: 'strings', nullable: true, nonEmpty: true, oneOf: JWS_ALGORITHMS },
        issuer: str(true),
        audience: str(true),
        clockToleranceSeconds: int(0, 3600),
        requiredScope: str(),
        maxTokenBytes: int(64, 65536),
        tokenCacheMaxEntries: int(1, 10_000_000),
        tokenCacheMaxBytes: int(64 * 1024, Number.MAX_SAFE_INTEGER),
        // 0 caches no token: every request is verified.
        tokenCacheMaxTokenBytes: int(0, 65536),
        jwksCooldownMs: int(0, MAX_MS),
        jwksTimeoutMs: int(1, 60_000),
        jwksMaxBytes: int(1024, 64 * 1024 * 1024),
        devKeyDir: path(),
        ownerClaim: str(true),
        readAnyScope: str(),
      },
    },
    cache: {
      kind: 'section',
      keys: {
        maxAgeSeconds: int(0, 31_536_000),
        maxEntries: int(1, 10_000_000),
        maxBytes: int(1024, Number.MAX_SAFE_INTEGER),
        // 0 switches each off; a day at most, as an expired entry still takes cache room.
        staleIfErrorSeconds: int(0, 86_400),
        staleWhileRevalidateSeconds: int(0, 86_400),
        // How long the upstream's "no such item" is remembered; 0 asks the upstream every time.
        notFoundSeconds: int(0, 86_400),
        // The second tier in Redis; null: on when redis.url is set.
        shared: { kind: 'boolean', nullable: true },
      },
    },
    // A null entry removes a resource the shipped config declares.
    resources: { kind: 'map', values: RESOURCE, nullableValues: true },
    idempotency: {
      kind: 'section',
      keys: {
        // How long a write's answer is kept for replay under its Idempotency-Key, in seconds.
        ttlSeconds: int(1, 30 * 86_400),
        maxEntries: int(1, 10_000_000),
        // Bytes the records of this process may hold (their answers above all), without Redis.
        maxBytes: int(65_536, Number.MAX_SAFE_INTEGER),
      },
    },
    rateLimit: {
      kind: 'section',
      keys: {
        // null or 0 switches rate limiting off.
        requestsPerSecond: int(0, 1_000_000, true),
        burst: int(1, 1_000_000),
        maxKeys: int(1, 10_000_000),
        // null: "cluster" when redis.url is set, else "instance".
        scope: { kind: 'string', nullable: true, oneOf: ['instance', 'cluster'] },
      },
    },
    cors: {
      kind: 'section',
      keys: {
        origins: { kind: 'strings' },
        maxAgeSeconds: int(0, 86_400),
        // Header names (HTTP tokens, checked across keys).
        exposeHeaders: { kind: 'strings' },
        allowHeaders: { kind: 'strings' },
      },
    },
    sampleUpstream: {
      kind: 'section',
      keys: { customers: int(1, 10_000_000) },
    },
    log: {
      kind: 'section',
      keys: {
        level: { kind: 'string', oneOf: LOG_LEVELS },
        access: { kind: 'boolean' },
        // 64 KiB (one pipe buffer) to 1 GiB.
        maxBufferBytes: int(65_536, 1024 * 1024 * 1024),
      },
    },
    redis: {
      kind: 'section',
      keys: {
        // null: no Redis, every instance on its own (as without this section).
        url: { kind: 'redisUrl', nullable: true },
        keyPrefix: str(),
        // The most a request waits for Redis; past it the request goes on without it.
        timeoutMs: int(1, 60_000),
        connectTimeoutMs: int(1, MAX_MS),
        breaker: {
          kind: 'section',
          keys: {
            failures: int(1, 1_000_000),
            cooldownMs: int(1, MAX_MS),
          },
        },
      },
    },
    admin: {
      kind: 'section',
      keys: {
        host: str(),
        // null switches the admin listener off.
        port: int(0, 65535, true),
        scope: str(),
      },
    },
  },
};
