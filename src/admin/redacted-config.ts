import type { Rule } from '../config/rule.ts';
import { RESOURCE } from '../config/resource-schema.ts';
import { CONFIG_SCHEMA } from '../config/schema.ts';
import type { Config, ResourceConfig } from '../config/types.ts';

/** What every hidden value shows as in an admin answer. */
export const REDACTED = '[redacted]';

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A URL with its user name and password (RFC 3986 section 3.2.1: credentials) shown as
 * [redacted]; a string no URL parser takes loses everything up to its last `@`, so a malformed
 * URL with a password cannot leak either.
 */
function redactedUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const at = value.lastIndexOf('@');
    return at === -1 ? value : `${REDACTED}${value.slice(at)}`;
  }
  if (url.username === '' && url.password === '') return value;
  // Built by hand: the URL setters would percent-encode the brackets.
  return `${url.protocol}//${REDACTED}@${url.host}${url.pathname === '/' && !value.endsWith('/') ? '' : url.pathname}${url.search}${url.hash}`;
}

/**
 * A value as the admin API shows it, following its schema rule: keys declared secret (auth.secret),
 * every upstream header value (a fixed header is how a credential reaches a service, and whether a
 * value is one cannot be told from its look; `{"env": NAME}` values are read at start and are
 * never in the config, but are hidden alike), and the credentials of URLs (redis.url) become
 * [redacted]. Everything else is shown as it is in force.
 */
function redact(rule: Rule, value: unknown): Json {
  if (value === null || value === undefined) return null;
  switch (rule.kind) {
    case 'section': {
      if (!isObject(value)) return null;
      const out: Record<string, Json> = {};
      for (const [key, child] of Object.entries(rule.keys)) out[key] = redact(child, value[key]);
      return out;
    }
    case 'map': {
      if (!isObject(value)) return null;
      const out: Record<string, Json> = {};
      for (const [key, child] of Object.entries(value)) out[key] = redact(rule.values, child);
      return out;
    }
    case 'headerValue':
      return REDACTED;
    case 'string':
      return rule.secret === true ? REDACTED : (value as string);
    case 'url':
    case 'redisUrl':
      return redactedUrl(value as string);
    case 'strings':
      return rule.urls === true ? (value as readonly string[]).map(redactedUrl) : (value as readonly string[]);
    case 'list':
      return Array.isArray(value) ? value.map((entry: unknown) => redact(rule.items, entry)) : null;
    case 'stringOr':
      return typeof value === 'string' ? redact(rule.string, value) : redact(rule.section, value);
    case 'scalar':
      return value as Json;
    case 'integer':
    case 'boolean':
      return value as number | string | boolean;
  }
}

/** The config in force with every secret replaced (GET /config). */
export function redactedConfig(config: Config): Json {
  return redact(CONFIG_SCHEMA, config);
}

/** One resource's declaration as in force (defaults filled in), redacted like the whole config. */
export function redactedDeclaration(declaration: ResourceConfig): Json {
  return redact(RESOURCE, declaration);
}
