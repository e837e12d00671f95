import type { JWTPayload } from 'jose';
import type { Config } from '../config/types.ts';

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

/**
 * Every scope the gateway may check: a verified principal keeps only these (a token may carry
 * thousands). A new check on another scope adds it here.
 */
export function checkedScopes(config: Config): readonly string[] {
  const scopes = [config.auth.requiredScope, config.auth.readAnyScope, config.admin.scope];
  // Each declared resource may name its own read and write scopes.
  for (const [name, r] of Object.entries(config.resources)) scopes.push(r.scope ?? config.auth.requiredScope, r.writeScope ?? `${name}:write`);
  // And each pass-through route its scope.
  for (const route of Object.values(config.routes)) if (route.scope !== null) scopes.push(route.scope);
  return [...new Set(scopes)];
}
