import { closest } from './closest.ts';
import { describeValue } from './describe.ts';
import { isAddressOrRange } from '../lib/ip-range.ts';
import { CONFIG_SCHEMA, type Rule } from './schema.ts';
import { checkResources } from './resource-checks.ts';
import { checkServices } from './service-checks.ts';
import type { Config } from './types.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where values came from when not from a config file: key path → the environment variable that set it. */
export type ValueOrigins = ReadonlyMap<string, string>;

/** The problems found so far, each naming its key, and the environment variable when one set it. */
class Problems {
  readonly list: string[] = [];
  readonly #origins: ValueOrigins;

  constructor(origins: ValueOrigins) {
    this.#origins = origins;
  }

  /** A key as a problem names it: `server.port`, or `HYPERGATE_SERVER_PORT (server.port)`. */
  name(path: string): string {
    const variable = this.#origins.get(path);
    return variable === undefined ? path : `${variable} (${path})`;
  }

  add(path: string, message: string): void {
    this.list.push(`${this.name(path)}: ${message}`);
  }
}

/**
 * Checks `value` against `rule` and returns it with left-out optional keys filled in; every
 * problem is added with its key path. Keys a section does not know are problems with a hint.
 */
function check(rule: Rule, value: unknown, path: string, problems: Problems): unknown {
  if (value === undefined && rule.optional !== undefined) return structuredClone(rule.optional.default);
  switch (rule.kind) {
    case 'section': {
      if (value === null && rule.nullable) return null;
      if (!isObject(value)) {
        problems.add(path, `expected an object${rule.nullable ? ' or null' : ''}, got ${describeValue(value, rule)}`);
        return value;
      }
      const known = Object.keys(rule.keys);
      for (const key of Object.keys(value)) {
        if (!(key in rule.keys)) {
          const hint = closest(key, known);
          problems.add(path ? `${path}.${key}` : key, `unknown key${hint ? ` (did you mean "${hint}"?)` : ''}`);
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
        problems.add(path, `expected an object, got ${describeValue(value, rule)}`);
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
      // A header value may be a secret: never shown.
      if (typeof value !== 'string' && !fromEnv) problems.add(path, `expected a string or {"env": "VARIABLE_NAME"}, got ${describeValue(value, { kind: 'string', secret: true })}`);
      return value;
    }
    case 'string': {
      if (value === null && rule.nullable) return value;
      if (typeof value !== 'string' || (rule.nonEmpty && value.length === 0)) {
        problems.add(path, `expected a ${rule.nonEmpty ? 'non-empty ' : ''}string${rule.nullable ? ' or null' : ''}, got ${describeValue(value, rule)}`);
        return value;
      }
      if (rule.oneOf && !rule.oneOf.includes(value)) {
        problems.add(path, `expected one of ${rule.oneOf.join(', ')}, got ${describeValue(value, rule)}`);
      }
      return value;
    }
    case 'integer': {
      if (value === null && rule.nullable) return value;
      if (rule.orWord !== undefined && value === rule.orWord) return value;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || value > rule.max) {
        const also = `${rule.nullable ? ' or null' : ''}${rule.orWord === undefined ? '' : ` or "${rule.orWord}"`}`;
        problems.add(path, `expected an integer from ${rule.min} to ${rule.max}${also}, got ${describeValue(value, rule)}`);
      }
      return value;
    }
    case 'boolean': {
      if (value === null && 'nullable' in rule && rule.nullable === true) return value;
      if (typeof value !== 'boolean') problems.add(path, `expected true or false${'nullable' in rule && rule.nullable === true ? ' or null' : ''}, got ${describeValue(value, rule)}`);
      return value;
    }
    case 'redisUrl': {
      if (value === null && rule.nullable) return value;
      // describeValue masks a URL's credentials (redact.ts): the value may hold a password.
      if (!isRedisUrl(value)) problems.add(path, `expected a redis:// or rediss:// URL (host, optional port, user, password and database number, no query or fragment)${rule.nullable ? ', or null' : ''}, got ${describeValue(value, rule)}`);
      return value;
    }
    case 'url': {
      if (value === null && rule.nullable) return value;
      let ok = false;
      if (typeof value === 'string') {
        try {
          const url = new URL(value);
          ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
        } catch {
          ok = false;
        }
      }
      if (!ok) problems.add(path, `expected an http(s) URL without credentials, query or fragment${rule.nullable ? ', or null' : ''}, got ${describeValue(value, rule)}`);
      return value;
    }
    case 'strings': {
      if (value === null && rule.nullable) return value;
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.length > 0)) {
        problems.add(path, `expected an array of non-empty strings${rule.nullable ? ' or null' : ''}, got ${describeValue(value, rule)}`);
        return value;
      }
      if (rule.nonEmpty && value.length === 0) problems.add(path, 'expected at least one entry');
      if (rule.oneOf) {
        for (const v of value) {
          if (!rule.oneOf.includes(v)) problems.add(path, `${describeValue(v, rule)} is not one of ${rule.oneOf.join(', ')}`);
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

/** A field name (RFC 9110 section 5.1): a token (section 5.6.2). */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Rules that span several keys: one key source, the algorithm allow-list that fits it. */
function checkAcrossKeys(config: Config, problems: Problems, env: NodeJS.ProcessEnv): void {
  const { auth, server } = config;
  // node:http refuses to start with a head allowance longer than the whole request's.
  if (server.headersTimeoutMs > server.requestTimeoutMs) {
    problems.add('server.headersTimeoutMs', `must not exceed ${problems.name('server.requestTimeoutMs')} (${server.requestTimeoutMs}), got ${server.headersTimeoutMs}`);
  }
  const sources = (['jwksUrl', 'jwksFile', 'publicKeyFile', 'secret'] as const).filter((k) => auth[k] !== null);
  if (sources.length > 1) {
    problems.add('auth', `set only one key source, got ${sources.map((s) => problems.name(`auth.${s}`)).join(' and ')}`);
  }
  const algs = auth.algorithms ?? [];
  const hmac = algs.filter((a) => a.startsWith('HS'));
  if (auth.secret !== null) {
    if (hmac.length === 0) problems.add('auth.secret', 'requires auth.algorithms to list HS256, HS384 or HS512');
    if (hmac.length !== algs.length) problems.add('auth.algorithms', 'with auth.secret only HS256, HS384 and HS512 are allowed');
    if (Buffer.byteLength(auth.secret) < 32) problems.add('auth.secret', 'expected at least 32 bytes (RFC 7518 section 3.2)');
  } else if (hmac.length > 0) {
    problems.add('auth.algorithms', `${hmac.join(', ')} needs auth.secret; public keys never verify HMAC tokens`);
  }
  if (/\s/.test(auth.requiredScope)) problems.add('auth.requiredScope', 'expected a single scope without spaces');
  if (/\s/.test(config.admin.scope)) problems.add('admin.scope', 'expected a single scope without spaces');
  if (config.admin.port !== null && config.admin.port !== 0 && config.admin.port === config.server.port && config.admin.host === config.server.host) {
    problems.add('admin.port', `must differ from ${problems.name('server.port')} (the admin listener is never the public one)`);
  }
  if (/\s/.test(auth.readAnyScope)) problems.add('auth.readAnyScope', 'expected a single scope without spaces');
  for (const entry of server.trustProxy) {
    if (!isAddressOrRange(entry)) problems.add('server.trustProxy', `"${entry}" is not an IP address or a CIDR range (10.0.0.0/8, fd00::/8)`);
  }
  for (const key of ['exposeHeaders', 'allowHeaders'] as const) {
    for (const name of config.cors[key]) {
      if (!HTTP_TOKEN.test(name)) problems.add(`cors.${key}`, `"${name}" is not a header name (an HTTP token, RFC 9110 section 5.1)`);
    }
  }
  if (config.redis.url === null) {
    if (config.rateLimit.scope === 'cluster') problems.add('rateLimit.scope', '"cluster" needs redis.url (the limit is kept in Redis)');
    if (config.cache.shared === true) problems.add('cache.shared', 'true needs redis.url (the shared tier is in Redis)');
  }
  if (/\s/.test(config.redis.keyPrefix)) problems.add('redis.keyPrefix', 'expected no spaces');
  // Keys of named entries (resources, services) never come from the environment: plain problems.
  checkServices(config, problems.list, HTTP_TOKEN, env);
  checkResources(config, problems.list);
  for (const origin of config.cors.origins) {
    if (origin !== '*' && !isOrigin(origin)) problems.add('cors.origins', `"${origin}" is not an origin (scheme://host[:port], no path), nor "*"`);
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
 * or throws ConfigError listing every problem. `origins` names the environment variables that set
 * keys, so their problems name them; `env` is where `{"env": "NAME"}` header values must exist.
 */
export function validateConfig(candidate: unknown, origins: ValueOrigins = new Map(), env: NodeJS.ProcessEnv = process.env): Config {
  const problems = new Problems(origins);
  const normalized = check(CONFIG_SCHEMA, candidate, '', problems);
  if (problems.list.length === 0) checkAcrossKeys(normalized as Config, problems, env);
  if (problems.list.length > 0) throw new ConfigError(problems.list);
  return deepFreeze(structuredClone(normalized as Json) as unknown as Config);
}
