import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeValue } from './describe.ts';
import { applyEnv } from './env.ts';
import type { ConfigCheck } from './cross-key-checks.ts';
import type { ValueOrigins } from './problems.ts';
import type { Rule } from './rule.ts';
import { CONFIG_SCHEMA } from './schema.ts';
import type { Config } from './types.ts';
import { ConfigError, validateConfig } from './validate.ts';

/**
 * The package root (this file is src/config/load.ts, or dist/config/load.js once built): config/default.json
 * and the dev-key folder are found from here, not from the cwd.
 */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Every key's default, as the schema writes them (scripts/config-docs.ts; a test keeps the two equal). */
export const DEFAULTS_FILE = resolve(PROJECT_ROOT, 'config/default.json');

type Tree = Record<string, unknown>;

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge where objects merge key by key and everything else (arrays included) replaces. */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isTree(base) || !isTree(over)) return over === undefined ? base : over;
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = mergeConfig(base[key], value);
  return out;
}

export function readDefaults(): Tree {
  return JSON.parse(readFileSync(DEFAULTS_FILE, 'utf8')) as Tree;
}

/** The defaults with their relative paths resolved against the package. */
function resolvedDefaults(): Tree {
  const defaults = readDefaults();
  resolvePaths(defaults, PROJECT_ROOT);
  return defaults;
}

function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError([`--config ${file}: cannot read the file (${code})`]);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigError([`--config ${file}: ${jsonSyntaxProblem(text, (err as Error).message)}`]);
  }
}

/**
 * A JSON syntax error as an operator can find it: line and column (1-based) of where the parser
 * stopped, then its own words. V8 says "at position N" (Node 20; Node 22 adds "(line L column C)",
 * dropped here so it is said once); "Unexpected end of JSON input" has no position: the end.
 */
function jsonSyntaxProblem(text: string, message: string): string {
  const position = /at position (\d+)/.exec(message);
  const offset = position === null ? text.length : Math.min(Number(position[1]), text.length);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  const words = message.replace(/ in JSON at position \d+.*$/s, '').replace(/ \(line \d+ column \d+\)$/, '');
  return `not valid JSON at line ${line}, column ${column}: ${words}`;
}

/**
 * Relative values of the keys the schema marks as paths mean "next to the file that holds them"
 * (`baseDir`), whatever the cwd. Walks the schema, not a list of names, so a new path key is covered
 * by marking it there.
 */
function resolvePaths(tree: unknown, baseDir: string, rule: Rule = CONFIG_SCHEMA): void {
  if (rule.kind !== 'section' || !isTree(tree)) return;
  for (const [key, child] of Object.entries(rule.keys)) {
    const value = tree[key];
    if (child.kind === 'section') resolvePaths(value, baseDir, child);
    else if (child.kind === 'map' && isTree(value)) for (const entry of Object.values(value)) resolvePaths(entry, baseDir, child.values);
    else if (child.kind === 'string' && child.path === true && typeof value === 'string' && value.length > 0 && !isAbsolute(value))
      tree[key] = resolve(baseDir, value);
  }
}

export interface LoadOptions {
  /** Path of a JSON file loaded over the defaults. */
  readonly file?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
}

/** The ways to get a validated config, each running the same checks. */
export interface ConfigLoader {
  /** Defaults, then the file, then the environment; validated once and frozen. */
  readonly loadConfig: (options?: LoadOptions) => Config;
  /** Defaults with an in-memory override, as tests and benchmarks build gateways. */
  readonly configWith: (overrides: unknown) => Config;
  /** A merged config object, validated and frozen (`origins`: the variables that set keys; `env`: for header values). */
  readonly validateConfig: (candidate: unknown, origins?: ValueOrigins, env?: NodeJS.ProcessEnv) => Config;
}

/**
 * The loader that runs `checks` along with the schema's own: checks of the whole config that
 * need code above config (the resource declarations' need the resources engine), passed in so
 * that config imports nothing above it. src/gateway/load-config.ts makes the one the gateway uses.
 */
export function createConfigLoader(checks: readonly ConfigCheck[]): ConfigLoader {
  const validate = (candidate: unknown, origins?: ValueOrigins, env?: NodeJS.ProcessEnv): Config => validateConfig(candidate, { checks, origins, env });
  return {
    loadConfig(options: LoadOptions = {}): Config {
      let merged = resolvedDefaults();
      if (options.file !== undefined) {
        const file = resolve(options.file);
        const fromFile = readJsonFile(file);
        if (!isTree(fromFile))
          throw new ConfigError([
            `--config ${file}: expected a JSON object of sections ({"upstream": {...}, "auth": {...}}), got ${describeValue(fromFile, { kind: 'section', keys: {} })}`,
          ]);
        resolvePaths(fromFile, dirname(file));
        merged = mergeConfig(merged, fromFile) as Tree;
      }
      const problems: string[] = [];
      const origins = options.env === undefined ? new Map<string, string>() : applyEnv(merged, options.env, problems);
      let config: Config;
      try {
        config = validate(merged, origins, options.env);
      } catch (err) {
        // Every problem at once: the unknown variables, and what the values that did apply got wrong.
        if (err instanceof ConfigError) throw new ConfigError([...problems, ...err.problems]);
        throw err;
      }
      if (problems.length > 0) throw new ConfigError(problems);
      return config;
    },
    configWith(overrides: unknown): Config {
      return validate(mergeConfig(resolvedDefaults(), overrides));
    },
    validateConfig: validate,
  };
}
