import { redactUrl } from './redact.ts';
import { CONFIG_SCHEMA, type Rule } from './schema.ts';
import { checkResources } from './resource-checks.ts';
import { checkServices } from './service-checks.ts';
import type { Config } from './types.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known key a typo most likely meant: a case-insensitive prefix, or at most two edits away. */
function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const prefixed = known.find((k) => k.toLowerCase().startsWith(lower) || lower.startsWith(k.toLowerCase()));
  if (prefixed !== undefined) return prefixed;
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** An HTTP field name (RFC 9110 section 5.1: a token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Checks `value` against `rule` and returns it with left-out optional keys filled in; every
 * problem is pushed with its key path. Keys a section does not know are problems with a hint.
 */
function check(rule: Rule, value: unknown, path: string, problems: string[]): unknown {
  if (value === undefined && rule.optional !== undefined) return structuredClone(rule.optional.default);
  switch (rule.kind) {
    case 'section': {
      if (value === null && rule.nullable) return null;
      if (!isObject(value)) {
        problems.push(`${path}: expected an object${rule.nullable ? ' or null' : ''}, got ${describe(value)}`);
        return value;
      }
      const known = Object.keys(rule.keys);
      for (const key of Object.keys(value)) {
        if (!(key in rule.keys)) {
          const hint = closest(key, known);
          problems.push(`${path ? `${path}.` : ''}${key}: unknown key${hint ? ` (did you mean "${hint}"?)` : ''}`);
        }
      }
      const out: Record<string, unknown> = {};
      for (const key of known) {
        const childRule = rule.keys[key];
        if (childRule) out[key] = check(childRule, value[key], path ? `${path}.${key}` : key, problems);
      }
      return out;
    }
    case 'map': {
      if (!isObject(value)) {
        problems.push(`${path}: expected an object, got ${describe(value)}`);
        return value;
      }
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(value)) {
        // A null entry removes the key (a shipped resource the operator does not want).
        if (entry === null && rule.nullableValues) continue;
        out[key] = check(rule.values, entry, `${path}.${key}`, problems);
      }
      return out;
    }
    case 'headerValue': {
      const fromEnv = isObject(value) && Object.keys(value).length === 1 && typeof value['env'] === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value['env']);
      if (typeof value !== 'string' && !fromEnv) problems.push(`${path}: expected a string or {"env": "VARIABLE_NAME"}, got ${describe(value)}`);
      return value;
    }
    case 'string': {
      if (value === null && rule.nullable) return value;
      if (typeof value !== 'string' || (rule.nonEmpty && value.length === 0)) {
        problems.push(`${path}: expected a ${rule.nonEmpty ? 'non-empty ' : ''}string${rule.nullable ? ' or null' : ''}, got ${describe(value)}`);
        return value;
      }
      if (rule.oneOf && !rule.oneOf.includes(value)) {
        problems.push(`${path}: expected one of ${rule.oneOf.join(', ')}, got ${describe(value)}`);
      }
      return value;
    }
    case 'integer': {
      if (value === null && rule.nullable) return value;
      if (rule.orWord !== undefined && value === rule.orWord) return value;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || value > rule.max) {
        const also = `${rule.nullable ? ' or null' : ''}${rule.orWord === undefined ? '' : ` or "${rule.orWord}"`}`;
        problems.push(`${path}: expected an integer from ${rule.min} to ${rule.max}${also}, got ${describe(value)}`);
      }
      return value;
    }
    case 'boolean': {
      if (value === null && rule.nullable) return value;
      if (typeof value !== 'boolean') problems.push(`${path}: expected true or false${rule.nullable ? ' or null' : ''}, got ${describe(value)}`);
      return value;
    }
    case 'redisUrl': {
      if (value === null && rule.nullable) return value;
      if (!isRedisUrl(value)) {
        // The value may hold a password: it is shown only with its credentials masked.
        const shown = typeof value === 'string' ? describe(redactUrl(value)) : describe(value);
        problems.push(`${path}: expected a redis:// or rediss:// URL (host, optional port, user, password and database number, no query or fragment)${rule.nullable ? ', or null' : ''}, got ${shown}`);
      }
      return value;
    }
    case 'url': {
      if (value === null && rule.nullable) return value;
      let ok = false;
      if (typeof value === 'string') {
        try {
          const url = new URL(value);
          ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.search === '' && url.hash === '';
        } catch {
          ok = false;
        }
      }
      if (!ok) problems.push(`${path}: expected an http(s) URL without credentials, query or fragment${rule.nullable ? ', or null' : ''}, got ${describe(value)}`);
      return value;
    }
    case 'strings': {
      if (value === null && rule.nullable) return value;
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.length > 0)) {
        problems.push(`${path}: expected an array of non-empty strings${rule.nullable ? ' or null' : ''}, got ${describe(value)}`);
        return value;
      }
      if (rule.nonEmpty && value.length === 0) problems.push(`${path}: expected at least one entry`);
      if (rule.oneOf) {
        for (const v of value) {
          if (!rule.oneOf.includes(v)) problems.push(`${path}: "${v}" is not one of ${rule.oneOf.join(', ')}`);
        }
      }
      return value;
    }
  }
}

/** redis://[user[:password]@]host[:port][/db] or rediss://... (the scheme ioredis reads; TLS for rediss). */
function isRedisUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '' && /^(\/\d{0,5})?$/.test(url.pathname) && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/** A serialized origin (RFC 6454 section 6.1) as browsers send it in the Origin header. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** Rules that span several keys: one key source, the algorithm allow-list that fits it. */
function checkAcrossKeys(config: Config, problems: string[], env: NodeJS.ProcessEnv): void {
  const { auth, server } = config;
  // node:http refuses to start with a head allowance longer than the whole request's.
  if (server.headersTimeoutMs > server.requestTimeoutMs) {
    problems.push(`server.headersTimeoutMs: must not exceed server.requestTimeoutMs (${server.requestTimeoutMs}), got ${server.headersTimeoutMs}`);
  }
  const sources = (['jwksUrl', 'jwksFile', 'publicKeyFile', 'secret'] as const).filter((k) => auth[k] !== null);
  if (sources.length > 1) {
    problems.push(`auth: set only one key source, got ${sources.map((s) => `auth.${s}`).join(' and ')}`);
  }
  const algs = auth.algorithms ?? [];
  const hmac = algs.filter((a) => a.startsWith('HS'));
  if (auth.secret !== null) {
    if (hmac.length === 0) problems.push('auth.secret: requires auth.algorithms to list HS256, HS384 or HS512');
    if (hmac.length !== algs.length) problems.push('auth.algorithms: with auth.secret only HS256, HS384 and HS512 are allowed');
    if (Buffer.byteLength(auth.secret) < 32) problems.push('auth.secret: expected at least 32 bytes (RFC 7518 section 3.2)');
  } else if (hmac.length > 0) {
    problems.push(`auth.algorithms: ${hmac.join(', ')} needs auth.secret; public keys never verify HMAC tokens`);
  }
  if (/\s/.test(auth.requiredScope)) problems.push('auth.requiredScope: expected a single scope without spaces');
  if (/\s/.test(config.admin.scope)) problems.push('admin.scope: expected a single scope without spaces');
  if (config.admin.port !== null && config.admin.port !== 0 && config.admin.port === config.server.port && config.admin.host === config.server.host) {
    problems.push('admin.port: must differ from server.port (the admin listener is never the public one)');
  }
  if (/\s/.test(auth.readAnyScope)) problems.push('auth.readAnyScope: expected a single scope without spaces');
  if (config.redis.url === null) {
    if (config.rateLimit.scope === 'cluster') problems.push('rateLimit.scope: "cluster" needs redis.url (the limit is kept in Redis)');
    if (config.cache.shared === true) problems.push('cache.shared: true needs redis.url (the shared tier is in Redis)');
  }
  if (/\s/.test(config.redis.keyPrefix)) problems.push('redis.keyPrefix: expected no spaces');
  checkServices(config, problems, TOKEN, env);
  checkResources(config, problems);
  for (const origin of config.cors.origins) {
    if (origin !== '*' && !isOrigin(origin)) problems.push(`cors.origins: "${origin}" is not an origin (scheme://host[:port], no path), nor "*"`);
  }
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Validates a merged config object; returns a frozen copy with left-out optional keys filled in,
 * or throws ConfigError listing every problem. `env` is where `{"env": "NAME"}` values must exist.
 */
export function validateConfig(candidate: unknown, env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const normalized = check(CONFIG_SCHEMA, candidate, '', problems);
  if (problems.length === 0) checkAcrossKeys(normalized as Config, problems, env);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(structuredClone(normalized as Json) as unknown as Config);
}
