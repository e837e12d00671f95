import { conform } from './check.ts';
import { checkAcrossKeys, type ConfigCheck } from './cross-key-checks.ts';
import { Problems, type ValueOrigins } from './problems.ts';
import { CONFIG_SCHEMA } from './schema.ts';
import type { Config } from './types.ts';

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

export interface ValidateOptions {
  /** Checks of the whole config that need more than config knows (cross-key-checks.ts ConfigCheck). */
  readonly checks: readonly ConfigCheck[];
  /** The environment variables that set keys, so their problems name them. */
  readonly origins?: ValueOrigins | undefined;
  /** Where `{"env": "NAME"}` header values must exist. */
  readonly env?: NodeJS.ProcessEnv | undefined;
}

/**
 * Validates a merged config object; returns a frozen copy with left-out optional keys filled in,
 * or throws ConfigError listing every problem.
 */
export function validateConfig(candidate: unknown, options: ValidateOptions): Config {
  const problems = new Problems(options.origins ?? new Map());
  const config = conform(CONFIG_SCHEMA, candidate, problems);
  if (config !== undefined) checkAcrossKeys(config, problems, options.env ?? process.env, options.checks);
  if (config === undefined || problems.list.length > 0) throw new ConfigError(problems.list);
  return deepFreeze(structuredClone(config));
}
