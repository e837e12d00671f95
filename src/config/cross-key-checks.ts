import { closest } from './closest.ts';
import { isAddressOrRange } from '../lib/ip-range.ts';
import { defaultServiceReaders, isDevAuth, KEY_SOURCE_KEYS } from './embedded-sample.ts';
import type { Problems } from './problems.ts';
import { redisTopology, redisTopologyProblems } from './redis-topology.ts';
import { checkServices, hasAddress, headerValueOf } from './service-checks.ts';
import type { Config } from './types.ts';

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

/**
 * A check of the whole config that needs more than config knows (the resource declarations need
 * the resources engine): passed in by whoever loads the config (src/gateway/load-config.ts), so
 * config imports nothing above it. Its problems name keys of named entries, which never come
 * from the environment: plain lines.
 */
export type ConfigCheck = (config: Config, problems: string[]) => void;

/**
 * Rules that span several keys: one key source, the algorithm allow-list that fits it, listeners
 * that differ, features that need Redis; then the services' headers and the checks passed in.
 */
export function checkAcrossKeys(config: Config, problems: Problems, env: NodeJS.ProcessEnv, checks: readonly ConfigCheck[]): void {
  const { auth, server } = config;
  // node:http refuses to start with a head allowance longer than the whole request's.
  if (server.headersTimeoutMs > server.requestTimeoutMs) {
    problems.add(
      'server.headersTimeoutMs',
      `must not exceed ${problems.name('server.requestTimeoutMs')} (${server.requestTimeoutMs}), got ${server.headersTimeoutMs}`,
    );
  }
  const sources = KEY_SOURCE_KEYS.filter((k) => auth[k] !== null);
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
  // The embedded sample service stands in for an unset upstream.url in dev auth mode only (embedded-sample.ts).
  const readers = defaultServiceReaders(config);
  if (!hasAddress(config.upstream) && !isDevAuth(auth) && readers.length > 0) {
    problems.add(
      'upstream.url',
      `not set, but ${readers.join(', ')} read from the default service; set it (HYPERGATE_UPSTREAM_URL) to that service's base URL (the embedded sample service runs only in dev auth mode, with no key source configured)`,
    );
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
  for (const [key, message] of redisTopologyProblems(config.redis)) problems.add(key, message);
  if (redisTopology(config.redis) === 'none') {
    if (config.rateLimit.scope === 'cluster') problems.add('rateLimit.scope', '"cluster" needs redis.url (the limit is kept in Redis)');
    if (config.cache.shared === true) problems.add('cache.shared', 'true needs redis.url (the shared tier is in Redis)');
  }
  if (/\s/.test(config.redis.keyPrefix)) problems.add('redis.keyPrefix', 'expected no spaces');
  const apiKeys = auth.apiKeys;
  if (apiKeys.file !== null || apiKeys.redis) {
    if (apiKeys.redis && redisTopology(config.redis) === 'none') problems.add('auth.apiKeys.redis', 'true needs redis.url (the keys are kept in Redis)');
    if (!/^[A-Za-z0-9_]{1,16}$/.test(apiKeys.prefix)) problems.add('auth.apiKeys.prefix', 'expected 1 to 16 letters, digits or "_"');
    const header = apiKeys.header;
    if (header !== null && !HTTP_TOKEN.test(header))
      problems.add('auth.apiKeys.header', `"${header}" is not a header name (an HTTP token, RFC 9110 section 5.1)`);
    if (header !== null && header.toLowerCase() === 'authorization')
      problems.add('auth.apiKeys.header', 'use null for the Authorization header (`ApiKey <key>`)');
  }
  const cursorSecret = config.paging.cursorSecret;
  if (cursorSecret !== null) {
    // Never echoed: only the variable's name, when it comes from one.
    const text = headerValueOf(cursorSecret, env);
    const source = typeof cursorSecret === 'string' ? 'the value' : `the environment variable ${cursorSecret.env}`;
    if (text === undefined || text === '') problems.add('paging.cursorSecret', `${source} is not set`);
    else if (Buffer.byteLength(text) < 32) problems.add('paging.cursorSecret', `${source} is shorter than 32 bytes`);
  }
  checkIntrospection(config, problems, env);
  checkPlanNames(config, problems);
  // Keys of named entries (resources, services) never come from the environment: plain problems.
  checkServices(config, problems.list, HTTP_TOKEN, env);
  for (const check of checks) check(config, problems.list);
  for (const origin of config.cors.origins) {
    if (origin !== '*' && !isOrigin(origin)) problems.add('cors.origins', `"${origin}" is not an origin (scheme://host[:port], no path), nor "*"`);
  }
}

/** The introspection endpoint's client credentials: both set (a variable that is unset or empty is named, never its value). */
function checkIntrospection(config: Config, problems: Problems, env: NodeJS.ProcessEnv): void {
  const introspection = config.auth.introspection;
  if (introspection.url === null) return;
  for (const key of ['clientId', 'clientSecret'] as const) {
    const value = introspection[key];
    const at = `auth.introspection.${key}`;
    if (value === null) {
      problems.add(at, `required with ${problems.name('auth.introspection.url')} (the identity provider authenticates the gateway with it)`);
      continue;
    }
    const text = headerValueOf(value, env);
    const source = typeof value === 'string' ? 'the value' : `the environment variable ${value.env}`;
    if (text === undefined || text === '') problems.add(at, `${source} is not set`);
  }
}

/** A plan's name as the RateLimit fields carry it (a quoted string): letters, digits, `.`, `_`, `-`. */
const PLAN_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** Plans are named by keys the RateLimit fields can carry, and every plan named is declared. */
function checkPlanNames(config: Config, problems: Problems): void {
  const declared = Object.keys(config.plans);
  for (const name of declared) {
    if (!PLAN_NAME.test(name))
      problems.list.push(`plans.${name}: expected a name of letters, digits, ".", "_" and "-" (at most 64), as the RateLimit fields carry it`);
  }
  for (const key of ['defaultPlan', 'anonymousPlan'] as const) {
    const name = config.rateLimit[key];
    if (name === null || declared.includes(name)) continue;
    const hint = closest(name, declared);
    problems.add(
      `rateLimit.${key}`,
      `"${name}" is not declared in plans${hint ? ` (did you mean "${hint}"?)` : declared.length === 0 ? ' (no plan is declared)' : ''}`,
    );
  }
}
