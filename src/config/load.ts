import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyEnv } from './env.ts';
import type { Config } from './types.ts';
import { ConfigError, validateConfig } from './validate.ts';

/** The project root: config/default.json and the dev-key folder are found from here, not from the cwd. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULTS_FILE = resolve(PROJECT_ROOT, 'config/default.json');

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
    throw new ConfigError([`--config ${file}: not valid JSON (${(err as Error).message})`]);
  }
}

/** Keys that hold file paths, by section. */
const PATH_KEYS = { auth: ['jwksFile', 'publicKeyFile', 'devKeyDir'], server: ['pidFile'] } as const;

/** Relative file paths in a config file mean "next to that file", whatever the cwd. */
function resolvePaths(tree: unknown, baseDir: string): void {
  if (!isTree(tree)) return;
  for (const [name, keys] of Object.entries(PATH_KEYS)) {
    const section = tree[name];
    if (!isTree(section)) continue;
    for (const key of keys) {
      const value = section[key];
      if (typeof value === 'string' && value.length > 0 && !isAbsolute(value)) section[key] = resolve(baseDir, value);
    }
  }
}

export interface LoadOptions {
  /** Path of a JSON file loaded over the defaults. */
  readonly file?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
}

/** Defaults, then the file, then the environment; validated once and frozen. */
export function loadConfig(options: LoadOptions = {}): Config {
  const defaults = readDefaults();
  resolvePaths(defaults, PROJECT_ROOT);
  let merged = defaults;
  if (options.file !== undefined) {
    const file = resolve(options.file);
    const fromFile = readJsonFile(file);
    resolvePaths(fromFile, dirname(file));
    merged = mergeConfig(defaults, fromFile) as Tree;
  }
  const problems: string[] = [];
  const origins = options.env === undefined ? new Map<string, string>() : applyEnv(merged, options.env, problems);
  let config: Config;
  try {
    config = validateConfig(merged, origins);
  } catch (err) {
    // Every problem at once: the unknown variables, and what the values that did apply got wrong.
    if (err instanceof ConfigError) throw new ConfigError([...problems, ...err.problems]);
    throw err;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Defaults with an in-memory override, as tests and benchmarks build gateways. */
export function configWith(overrides: unknown): Config {
  const defaults = readDefaults();
  resolvePaths(defaults, PROJECT_ROOT);
  return validateConfig(mergeConfig(defaults, overrides));
}
