import type { Config, ResourceConfig, UpstreamConfig } from './types.ts';

/**
 * What each resource's answer varies with, by name (src/resources/identity.ts compiles it into the
 * cache key): read by the claim table (which claims a token keeps), the start-up log and
 * --check-config.
 */

/** Claims a service sends its upstream: its forwardClaims, and the token's subject with forwardAuthorization. */
export function forwardedClaims(service: UpstreamConfig): string[] {
  const claims = [...new Set(Object.values(service.forwardClaims))];
  if (service.forwardAuthorization && !claims.includes('sub')) claims.push('sub');
  return claims;
}

/** The service a declaration reads from (validation has checked that it exists). */
function serviceOf(config: Config, r: ResourceConfig): UpstreamConfig | undefined {
  return r.service === 'upstream' ? config.upstream : config.upstreams[r.service];
}

/**
 * What the declaration varies with, by name: its `vary`; else, unless `sharedAcrossIdentities`,
 * what its service forwards (implicit). Null when nothing.
 */
export function declaredVary(config: Config, r: ResourceConfig): { claims: string[]; headers: string[]; implicit: boolean } | null {
  if (r.vary !== null)
    return r.vary.claims.length + r.vary.headers.length === 0 ? null : { claims: [...r.vary.claims], headers: [...r.vary.headers], implicit: false };
  if (r.sharedAcrossIdentities) return null;
  const service = serviceOf(config, r);
  if (service === undefined) return null;
  const claims = forwardedClaims(service);
  const headers = [...service.forwardHeaders];
  return claims.length + headers.length === 0 ? null : { claims, headers, implicit: true };
}

/** Every claim some resource's cache key reads (the claim table keeps them). */
export function varyClaims(config: Config): string[] {
  return Object.values(config.resources).flatMap((r) => declaredVary(config, r)?.claims ?? []);
}

/**
 * One line per resource that varies implicitly (what its service forwards), for the start-up log
 * and --check-config: an operator sees which answers are cached per identity without having said so.
 */
export function implicitVaryNotes(config: Config): string[] {
  const notes: string[] = [];
  for (const [name, r] of Object.entries(config.resources)) {
    const named = declaredVary(config, r);
    if (named?.implicit !== true) continue;
    const by = [...named.claims.map((c) => `claim ${c}`), ...named.headers.map((h) => `header ${h}`)].join(', ');
    notes.push(
      `resources.${name} is cached per identity (${by}): its service ${r.service} forwards them; set resources.${name}.vary to choose, or sharedAcrossIdentities: true if the answer does not depend on them`,
    );
  }
  return notes;
}
