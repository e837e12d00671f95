import { configWith } from '../../src/config/load.ts';
import { ConfigError } from '../../src/config/validate.ts';

/** The problems validation finds in the defaults with these overrides; [] when valid. */
export function configProblems(overrides: unknown): string[] {
  try {
    configWith(overrides);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems as string[];
    throw err;
  }
  return [];
}
