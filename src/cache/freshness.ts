import type { UpstreamFreshness } from '../upstream/cache-control.ts';

/** How long a rendered resource may be served, and whether it may be stored at all. */
export interface Freshness {
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
  readonly cacheControl: string;
  readonly storable: boolean;
  /** May it answer once expired (see UpstreamFreshness.staleAllowed)? */
  readonly staleAllowed: boolean;
}

/** What a cached entry says about its own lifetime (a CacheEntry, or a Representation). */
interface Lifetime {
  readonly expiresAtMs: number;
}

/** Freshness of a resource made here, without an upstream (API root, OpenAPI document): `maxAgeSeconds` from `nowMs`. */
export function localFreshness(nowMs: number, maxAgeSeconds: number): Freshness {
  return { storedAtMs: nowMs, expiresAtMs: nowMs + maxAgeSeconds * 1000, cacheControl: `max-age=${maxAgeSeconds}`, storable: true, staleAllowed: true };
}

/**
 * Freshness of an upstream answer received at `nowMs`: the upstream may shorten our lifetime
 * (`maxAgeSeconds`), never lengthen it, and its Age (`ageSeconds`) dates the version back
 * (RFC 9111 section 4.2.3), so our Age goes on from the upstream's.
 */
export function upstreamFreshness(upstream: UpstreamFreshness, ageSeconds: number, maxAgeSeconds: number, nowMs: number): Freshness {
  const { noStore, maxAgeSeconds: upstreamMaxAge, staleAllowed } = upstream;
  const lifetime = upstreamMaxAge === null ? maxAgeSeconds : Math.min(maxAgeSeconds, upstreamMaxAge);
  const storedAtMs = nowMs - ageSeconds * 1000;
  return {
    storedAtMs,
    expiresAtMs: storedAtMs + lifetime * 1000,
    cacheControl: noStore ? 'no-store' : `max-age=${lifetime}`,
    storable: !noStore,
    staleAllowed,
  };
}

/** May an answer with this freshness be kept at `nowMs`? Not no-store, and not stale on arrival (an upstream max-age=0). */
export function isStorable(freshness: Freshness, nowMs: number): boolean {
  return freshness.storable && freshness.expiresAtMs > nowMs;
}

/**
 * Was this representation made for the one request that caused it (the upstream said no-store,
 * private or no-cache: upstreamFreshness)? Then it is neither stored nor shared with the requests
 * that waited on the same load.
 */
export function forOneRequest(rep: { readonly cacheControl: string }): boolean {
  return rep.cacheControl === 'no-store';
}

/** Was a representation with this Cache-Control and lifetime stored when it arrived at `nowMs` (what `isStorable` decided)? */
export function wasStored(rep: Lifetime & { readonly cacheControl: string }, nowMs: number): boolean {
  return !forOneRequest(rep) && rep.expiresAtMs > nowMs;
}

/** Is an expired entry still within a stale window (`windowMs` past its expiry: stale-if-error, stale-while-revalidate, RFC 5861)? */
export function withinStaleWindow(entry: Lifetime, nowMs: number, windowMs: number): boolean {
  return nowMs < entry.expiresAtMs + windowMs;
}

/** Whole seconds an entry has been stale at `nowMs` (for the log). */
export function staleSeconds(entry: Lifetime, nowMs: number): number {
  return Math.floor((nowMs - entry.expiresAtMs) / 1000);
}

/** RFC 9211 section 2.4: the remaining freshness, in whole seconds (negative once stale), of a representation at `nowMs`. */
export function remainingSeconds(rep: { readonly lifetimeSeconds: number; ageAt(nowMs: number): number }, nowMs: number): number {
  return rep.lifetimeSeconds - rep.ageAt(nowMs);
}
