import type { JWTPayload } from 'jose';

/** Scopes from `scope` (space-separated, RFC 8693/9068) and `scp` (array, or a space-separated string). */
export function scopesOf(claims: JWTPayload): ReadonlySet<string> {
  const scopes = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const s of value.split(' ')) if (s) scopes.add(s);
    } else if (Array.isArray(value)) {
      for (const s of value) if (typeof s === 'string' && s) scopes.add(s);
    }
  };
  add(claims['scope']);
  add(claims['scp']);
  return scopes;
}
