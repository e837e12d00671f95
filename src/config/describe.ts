import { redactUrl } from './redact.ts';
import type { Rule } from './rule.ts';

const SHOWN_CHARS = 40;

/**
 * A rejected value as a config problem shows it ("got ..."): a secret key's value never, only its
 * type; a string with any URL credentials replaced (before it is shortened, so a cut cannot keep
 * half a password); objects and arrays by their kind.
 */
export function describeValue(value: unknown, rule: Rule): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (rule.kind === 'string' && rule.secret === true) return `a ${typeof value} (not shown: the key holds a secret)`;
  if (typeof value === 'string') {
    const shown = redactUrl(value);
    return JSON.stringify(shown.length > SHOWN_CHARS ? `${shown.slice(0, SHOWN_CHARS)}…` : shown);
  }
  // What is left came from JSON or the environment: a number, a boolean, or nothing; never an object.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return String(value);
}
