import { closest } from './closest.ts';
import { describeValue } from './describe.ts';
import type { Problems } from './problems.ts';
import type { Rule, ValueOf } from './rule.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks `value` against `rule` and returns it with left-out optional keys filled in; every
 * problem is added with its key path. Keys a section does not know are problems with a hint.
 */
function check(rule: Rule, value: unknown, path: string, problems: Problems): unknown {
  if (value === undefined && rule.default !== undefined) return structuredClone(rule.default);
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
      if (value === null && rule.nullable === true) return value;
      const fromEnv = isObject(value) && Object.keys(value).length === 1 && typeof value['env'] === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value['env']);
      // A header value may be a secret: never shown.
      if (typeof value !== 'string' && !fromEnv)
        problems.add(
          path,
          `expected a string or {"env": "VARIABLE_NAME"}${rule.nullable === true ? ' or null' : ''}, got ${describeValue(value, { kind: 'string', secret: true })}`,
        );
      return value;
    }
    case 'scalar': {
      if (value === null && rule.nullable === true) return value;
      const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
      if (!isScalar(value) && !(Array.isArray(value) && value.every(isScalar)))
        problems.add(
          path,
          `expected a string, number, boolean or an array of them${rule.nullable === true ? ', or null' : ''}, got ${describeValue(value, rule)}`,
        );
      return value;
    }
    case 'stringOr': {
      if (value === null && rule.nullable === true) return value;
      if (typeof value === 'string') return check(rule.string, value, path, problems);
      if (isObject(value)) return check(rule.section, value, path, problems);
      problems.add(
        path,
        `expected a string or an object (${Object.keys(rule.section.keys).join(', ')})${rule.nullable === true ? ' or null' : ''}, got ${describeValue(value, rule)}`,
      );
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
      if (typeof value !== 'boolean')
        problems.add(path, `expected true or false${'nullable' in rule && rule.nullable === true ? ' or null' : ''}, got ${describeValue(value, rule)}`);
      return value;
    }
    case 'redisUrl': {
      if (value === null && rule.nullable) return value;
      // describeValue masks a URL's credentials (redact.ts): the value may hold a password.
      if (!isRedisUrl(value))
        problems.add(
          path,
          `expected a redis:// or rediss:// URL (host, optional port, user, password and database number, no query or fragment)${rule.nullable ? ', or null' : ''}, got ${describeValue(value, rule)}`,
        );
      return value;
    }
    case 'url': {
      if (value === null && rule.nullable) return value;
      const port = typeof value === 'string' ? portOutOfRange(value) : null;
      if (port !== null) {
        problems.add(path, `the port ${port} is out of range (1 to 65535), got ${describeValue(value, rule)}`);
        return value;
      }
      let ok = false;
      if (typeof value === 'string') {
        try {
          const url = new URL(value);
          ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
        } catch {
          ok = false;
        }
      }
      if (!ok)
        problems.add(
          path,
          `expected an http(s) URL without credentials, query or fragment${rule.nullable ? ', or null' : ''}, got ${describeValue(value, rule)}`,
        );
      return value;
    }
    case 'list': {
      if (value === null && rule.nullable) return value;
      if (!Array.isArray(value)) {
        problems.add(path, `expected an array${rule.nullable ? ' or null' : ''}, got ${describeValue(value, rule)}`);
        return value;
      }
      return value.map((entry, i) => check(rule.items, entry, `${path}[${i}]`, problems));
    }
    case 'strings': {
      if (value === null && rule.nullable) return value;
      const entries = rule.entries;
      if (entries !== undefined && Array.isArray(value)) {
        const out = value.map((v, i) => (typeof v === 'string' && v.length > 0 ? v : check(entries, v, `${path}[${i}]`, problems)));
        if (rule.nonEmpty && value.length === 0) problems.add(path, 'expected at least one entry');
        return out;
      }
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.length > 0)) {
        problems.add(path, `expected an array of non-empty strings${rule.nullable ? ' or null' : ''}, got ${describeValue(value, rule)}`);
        return value;
      }
      if (rule.nonEmpty && value.length === 0) problems.add(path, 'expected at least one entry');
      if (rule.oneOf) {
        for (const v of value as string[]) {
          if (!rule.oneOf.includes(v)) problems.add(path, `${describeValue(v, rule)} is not one of ${rule.oneOf.join(', ')}`);
        }
      }
      return value;
    }
  }
}

/**
 * The port an http(s) URL names when it is outside 1-65535 (WHATWG URL refuses one over 65535
 * with a bare "Invalid URL"; port 0 parses, and can never be connected to); else null.
 */
function portOutOfRange(value: string): string | null {
  const port = /^https?:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*):(\d+)(?:[/?#]|$)/i.exec(value)?.[1];
  if (port === undefined) return null;
  const n = Number(port);
  return n >= 1 && n <= 65535 ? null : port;
}

/** redis://[user[:password]@]host[:port][/db] or rediss://... (the scheme ioredis reads; TLS for rediss). */
export function isRedisUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'redis:' || url.protocol === 'rediss:') &&
      url.hostname !== '' &&
      /^(\/\d{0,5})?$/.test(url.pathname) &&
      url.search === '' &&
      url.hash === ''
    );
  } catch {
    return false;
  }
}

/**
 * `value` checked against `rule`, with left-out keys filled in from their defaults; undefined when
 * a problem was found (each is in `problems`).
 */
export function conform<R extends Rule>(rule: R, value: unknown, problems: Problems): ValueOf<R> | undefined {
  const before = problems.list.length;
  const out = check(rule, value, '', problems);
  // Nothing found: every key holds what its rule allows, which is the type ValueOf reads off the rule.
  return problems.list.length === before ? (out as ValueOf<R>) : undefined;
}
