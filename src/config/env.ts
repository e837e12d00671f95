import { CONFIG_SCHEMA, type Rule } from './schema.ts';

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

function collect(rule: Rule, path: readonly string[], out: Map<string, EnvKey>): void {
  if (rule.kind === 'section') {
    for (const [key, child] of Object.entries(rule.keys)) collect(child, [...path, key], out);
    return;
  }
  // Arrays and maps (resources, services, headers) are not scalars: they stay in config files,
  // where their shape is plain to see.
  if (rule.kind === 'strings' || rule.kind === 'map' || rule.kind === 'headerValue') return;
  out.set(`HYPERGATE_${path.map(screaming).join('_')}`, { path, rule });
}

/** Every scalar key's variable name, derived from the schema so new keys get one for free. */
export const ENV_KEYS: ReadonlyMap<string, EnvKey> = (() => {
  const out = new Map<string, EnvKey>();
  collect(CONFIG_SCHEMA, [], out);
  return out;
})();

/** Short names kept from before the general scheme (README "Configuration"). */
const ALIASES: Readonly<Record<string, string>> = { HYPERGATE_PORT: 'HYPERGATE_SERVER_PORT', HYPERGATE_HOST: 'HYPERGATE_SERVER_HOST' };

/** Variables that are not config keys but are ours to read. */
const NOT_KEYS = new Set<string>([]);

/** Text of an environment variable → the JSON value its key expects; a problem string when it cannot be. */
function coerce(name: string, key: string, raw: string, rule: Rule): { value: unknown } | { problem: string } {
  const nullable = 'nullable' in rule && rule.nullable === true;
  if (nullable && raw === 'null') return { value: null };
  switch (rule.kind) {
    case 'integer':
      if (rule.orWord !== undefined && raw === rule.orWord) return { value: raw };
      if (!/^-?\d+$/.test(raw)) return { problem: `${name}: expected an integer for ${key}, got ${JSON.stringify(raw)}` };
      return { value: Number(raw) };
    case 'boolean':
      if (raw === 'true' || raw === '1') return { value: true };
      if (raw === 'false' || raw === '0') return { value: false };
      return { problem: `${name}: expected true or false for ${key}, got ${JSON.stringify(raw)}` };
    default:
      return { value: raw };
  }
}

/**
 * Applies `HYPERGATE_<SECTION>_<KEY>` variables (and the short aliases) onto a merged config
 * tree. The validator checks the result like any file value, so a bad value names its key.
 */
export function applyEnv(tree: Tree, env: NodeJS.ProcessEnv, problems: string[]): void {
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('HYPERGATE_') || raw === undefined || raw === '' || NOT_KEYS.has(name)) continue;
    const canonical = ALIASES[name] ?? name;
    const key = ENV_KEYS.get(canonical);
    if (key === undefined) {
      problems.push(`${name}: not a configuration variable (scalar keys are HYPERGATE_<SECTION>_<KEY>, e.g. HYPERGATE_SERVER_PORT)`);
      continue;
    }
    if (canonical !== name && env[canonical] !== undefined && env[canonical] !== '') continue; // the long name wins
    const result = coerce(name, key.path.join('.'), raw, key.rule);
    if ('problem' in result) {
      problems.push(result.problem);
      continue;
    }
    let node: Tree = tree;
    for (const part of key.path.slice(0, -1)) {
      const next = node[part];
      if (!isTree(next)) {
        node[part] = {};
      }
      node = node[part] as Tree;
    }
    node[key.path[key.path.length - 1] as string] = result.value;
  }
}
