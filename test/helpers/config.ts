import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/validate.ts';

/** The problems a config load reports; fails the test when it loads without any. */
export function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  assert.fail('expected a ConfigError');
}
