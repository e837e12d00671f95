import { closest } from './closest.ts';
import type { Rule } from './rule.ts';
import { CONFIG_SCHEMA } from './schema.ts';

type Tree = Record<string, unknown>;

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `drainTimeoutMs` → `DRAIN_TIMEOUT_MS`, `sampleUpstream` → `SAMPLE_UPSTREAM`. */
function screaming(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

interface EnvKey {
  readonly path: readonly string[];
  readonly rule: Rule;
}

const PREFIX = 'HYPERGATE_';

function collect(rule: Rule, path: readonly string[], out: Map<string, EnvKey>, lists: Map<string, string>): void {
  if (rule.kind === 'section') {
    for (const [key, child] of Object.entries(rule.keys)) collect(child, [...path, key], out, lists);
    return;
  }
  const name = `${PREFIX}${path.map(screaming).join('_')}`;
  // Arrays and maps (resources, services, headers) are not scalars: they stay in config files,
  // where their shape is plain to see.
  if (rule.kind === 'strings' || rule.kind === 'map' || rule.kind === 'list') lists.set(name, path.join('.'));
  else out.set(name, { path, rule });
}

/** List keys by the variable name they would have: a variable setting one is told to use a file. */
const LIST_KEYS = new Map<string, string>();

/** Every scalar key's variable name, derived from the schema so new keys get one for free. */
export const ENV_KEYS: ReadonlyMap<string, EnvKey> = (() => {
  const out = new Map<string, EnvKey>();
  collect(CONFIG_SCHEMA, [], out, LIST_KEYS);
  return out;
})();

/** The names a mistyped variable is compared with, without the common prefix. */
const KNOWN_SUFFIXES = [...ENV_KEYS.keys()].map((name) => name.slice(PREFIX.length));

/** Why a HYPERGATE_ variable names no key, with the same "did you mean" rule as unknown keys in a file. */
function unknownVariable(name: string): string {
  const list = LIST_KEYS.get(name);
  if (list !== undefined) return `${name}: ${list} is a list; lists are set in a config file (--config)`;
  const hint = closest(name.slice(PREFIX.length), KNOWN_SUFFIXES);
  if (hint !== undefined) return `${name}: not a configuration variable (did you mean "${PREFIX}${hint}"?)`;
  return `${name}: not a configuration variable (scalar keys are ${PREFIX}<SECTION>_<KEY>, e.g. ${PREFIX}SERVER_PORT)`;
}

/** Short names kept from before the general scheme (docs/configuration.md "Where settings come from"). */
const ALIASES: Readonly<Record<string, string>> = { HYPERGATE_PORT: 'HYPERGATE_SERVER_PORT', HYPERGATE_HOST: 'HYPERGATE_SERVER_HOST' };

/** Variables that are not config keys but are ours to read. */
const NOT_KEYS = new Set<string>([]);

/**
 * Text of an environment variable → the JSON value its key expects. Text that is not of the key's
 * type stays text, so the validator refuses it with the same words as a bad value in a file.
 */
function coerce(raw: string, rule: Rule): unknown {
  if ('nullable' in rule && rule.nullable === true && raw === 'null') return null;
  switch (rule.kind) {
    case 'integer':
      return /^-?\d+$/.test(raw) ? Number(raw) : raw;
    case 'boolean':
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      return raw;
    default:
      return raw;
  }
}

/**
 * Applies `HYPERGATE_<SECTION>_<KEY>` variables (and the short aliases) onto a merged config
 * tree, and returns which variable set which key path: the validator checks the result like any
 * file value, and its problems name the variable.
 */
export function applyEnv(tree: Tree, env: NodeJS.ProcessEnv, problems: string[]): Map<string, string> {
  const origins = new Map<string, string>();
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(PREFIX) || raw === undefined || raw === '' || NOT_KEYS.has(name)) continue;
    const canonical = ALIASES[name] ?? name;
    const key = ENV_KEYS.get(canonical);
    if (key === undefined) {
      problems.push(unknownVariable(name));
      continue;
    }
    if (canonical !== name && env[canonical] !== undefined && env[canonical] !== '') continue; // the long name wins
    let node: Tree = tree;
    for (const part of key.path.slice(0, -1)) {
      const next = node[part];
      if (!isTree(next)) {
        node[part] = {};
      }
      node = node[part] as Tree;
    }
    node[key.path[key.path.length - 1] as string] = coerce(raw, key.rule);
    origins.set(key.path.join('.'), name);
  }
  return origins;
}
