import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/validate.ts';
import { configWith } from '../../src/gateway/load-config.ts';

/** The problems a config load reports, or null when it loads. */
function problemsOrNull(fn: () => unknown): readonly string[] | null {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return null;
}

/** The problems validation finds in the defaults with these overrides; [] when valid. */
export function configProblems(overrides: unknown): string[] {
  return [...(problemsOrNull(() => configWith(overrides)) ?? [])];
}

/** The problems a config load reports; fails the test when it loads without any. */
export function problemsOf(fn: () => unknown): readonly string[] {
  const problems = problemsOrNull(fn);
  if (problems === null) assert.fail('expected a ConfigError');
  return problems;
}

/**
 * An upstream section for configs that name a key source but test something else: with a key
 * source, a resource on the default service needs upstream.url (nothing listens on port 9).
 */
export const SOME_UPSTREAM = { url: 'http://127.0.0.1:9' } as const;
