import type { JwsAlgorithm, LogLevel } from './types.ts';

/**
 * The shape every config file must have. The validator walks this tree, so adding a key here
 * (and to config/default.json, and to the README table) is all it takes to add an option.
 */
export type Rule =
  | { readonly kind: 'string'; readonly nullable?: boolean; readonly nonEmpty?: boolean; readonly oneOf?: readonly string[] }
  | { readonly kind: 'integer'; readonly min: number; readonly max: number; readonly nullable?: boolean; readonly orWord?: string }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'url'; readonly nullable?: boolean }
  | { readonly kind: 'strings'; readonly nullable?: boolean; readonly oneOf?: readonly string[]; readonly nonEmpty?: boolean }
  | { readonly kind: 'section'; readonly keys: Readonly<Record<string, Rule>> };

export const JWS_ALGORITHMS: readonly JwsAlgorithm[] = [
  'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512',
  'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
];
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
const MAX_MS = 24 * 60 * 60 * 1000;

const int = (min: number, max: number, nullable = false): Rule => ({ kind: 'integer', min, max, nullable });
const str = (nullable = false): Rule => ({ kind: 'string', nullable, nonEmpty: true });

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
        // IP addresses and CIDR ranges (checked across keys).
        trustProxy: { kind: 'strings' },
        // A number of worker processes, or "auto" for one per core (node:cluster).
        workers: { kind: 'integer', min: 1, max: 256, orWord: 'auto' },
      },
    },
    upstream: {
      kind: 'section',
      keys: {
        url: { kind: 'url', nullable: true },
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
      },
    },
    auth: {
      kind: 'section',
      keys: {
        jwksUrl: { kind: 'url', nullable: true },
        jwksFile: str(true),
        publicKeyFile: str(true),
        secret: str(true),
        algorithms: { kind: 'strings', nullable: true, nonEmpty: true, oneOf: JWS_ALGORITHMS },
        issuer: str(true),
        audience: str(true),
        clockToleranceSeconds: int(0, 3600),
        requiredScope: str(),
        maxTokenBytes: int(64, 65536),
        tokenCacheMaxEntries: int(1, 10_000_000),
        jwksCooldownMs: int(0, MAX_MS),
        devKeyDir: str(),
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
      },
    },
    resources: {
      kind: 'section',
      keys: {
        customers: {
          kind: 'section',
          keys: { exposeFields: { kind: 'strings' } },
        },
        orders: {
          kind: 'section',
          keys: { exposeFields: { kind: 'strings' } },
        },
      },
    },
    rateLimit: {
      kind: 'section',
      keys: {
        // null or 0 switches rate limiting off.
        requestsPerSecond: int(0, 1_000_000, true),
        burst: int(1, 1_000_000),
        maxKeys: int(1, 10_000_000),
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
