import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { OVERSIZED_CLAIM, type ClaimTable, type ClaimValue } from '../auth/claims.ts';
import type { Config, ResourceConfig } from '../config/types.ts';
import { declaredVary } from '../config/vary.ts';
import { HgError } from '../lib/errors.ts';

/**
 * Identity-aware caching: one function from (declaration, principal, request) to a cache key, used
 * by every tier, by single-flight, by purge and by invalidation alike.
 *
 * The key of a varying resource's entry is its canonical path, `#`, and a digest of the identity
 * (the declared claims' values and the normalised request headers' values). `#` never occurs in a
 * canonical path (a fragment is never sent), so the path is always the part before it. Every such
 * entry also belongs to the invalidation group `variantsGroup(path)`: invalidating a path (a write,
 * a purge, another instance's message) drops that group with the key, so every identity's entry
 * goes, in the local cache and in Redis, through the group index both already keep. A suffix alone
 * would need a prefix scan (the LRU and Redis have none); a separate index would be one more
 * structure to keep consistent across tiers.
 */
const MARK = '#';
const VARIANTS = 'variants:';

/** What a resource's answer varies with, compiled once; null for one that varies with nothing (the hot path's case). */
export interface CompiledVary {
  /** Claim names and their index in the principal's kept claims (ClaimTable order). */
  readonly claims: readonly (readonly [string, number])[];
  /** Request header names, lower case. */
  readonly headers: readonly string[];
  /** The names added to `Vary` on its answers (the request headers, as declared). */
  readonly varyHeaders: readonly string[];
  /** Not declared: derived from what its service forwards. */
  readonly implicit: boolean;
}

export function compileVary(config: Config, r: ResourceConfig, table: ClaimTable): CompiledVary | null {
  const named = declaredVary(config, r);
  if (named === null) return null;
  return {
    claims: named.claims.map((name) => [name, table.indexOf(name)] as const),
    headers: named.headers.map((h) => h.toLowerCase()),
    varyHeaders: named.headers,
    implicit: named.implicit,
  };
}

/** A request header's value as the key reads it: lines joined, trimmed, inner white space collapsed, lower case. */
function normalised(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text
    .trim()
    .replace(/[ \t]+/g, ' ')
    .toLowerCase();
}

/**
 * The cache key of `path` for this principal's claims and this request. A claim kept as too long
 * (OVERSIZED_CLAIM) cannot tell identities apart: the request is refused, never answered from an
 * entry shared with another identity.
 */
export function identityKey(path: string, vary: CompiledVary, claims: readonly ClaimValue[] | undefined, req: IncomingMessage): string {
  const parts: (string | number | null)[] = [];
  for (const [name, index] of vary.claims) {
    const value = claims?.[index];
    if (value === OVERSIZED_CLAIM)
      throw new HgError('HG_ERR_CLAIM_NOT_FORWARDABLE', { detail: `The token's ${name} claim is too long to tell whose answer this is.` });
    parts.push(value ?? null);
  }
  for (const header of vary.headers) parts.push(normalised(req.headers[header]));
  return path + MARK + createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

/** The canonical path of a cache key (itself for an entry that varies with nothing). */
export function pathOfKey(key: string): string {
  // The last mark: the digest has none, whatever the canonical query before it holds.
  const at = key.lastIndexOf(MARK);
  return at === -1 ? key : key.slice(0, at);
}

/** The identity part of a key (`#...`), or '' for one that varies with nothing. */
export function identityOfKey(key: string): string {
  const at = key.lastIndexOf(MARK);
  return at === -1 ? '' : key.slice(at);
}

/** The group every identity's entry of `path` belongs to. */
export function variantsGroup(path: string): string {
  return VARIANTS + path;
}

/** The groups an entry at `key` is filed under: the source's, and for a varying key its path's variants group. */
export function keyGroups(key: string, groups: readonly string[]): readonly string[] {
  return key.includes(MARK) ? [...groups, variantsGroup(pathOfKey(key))] : groups;
}

/** An invalidation of a varying resource's keys also drops every identity's entry of them. */
export function withVariants(names: { keys: string[]; groups: string[] }): { keys: string[]; groups: string[] } {
  return { keys: names.keys, groups: [...names.groups, ...names.keys.map(variantsGroup)] };
}
