import type { ResponseHeaders } from '../lib/exchange.ts';
import { parseHttpDate } from '../protocol/http-date.ts';

/** What a shared cache may do with an upstream answer (RFC 9111 sections 4.2 and 5.2.2). */
export interface UpstreamFreshness {
  /** no-store, private or no-cache: do not keep it. */
  readonly noStore: boolean;
  /**
   * The freshness lifetime the upstream gives, in seconds: s-maxage, else max-age, else Expires
   * minus Date; 0 (stale on arrival) when that is invalid or conflicting; null when it gives none.
   */
  readonly maxAgeSeconds: number | null;
  /**
   * May a stale copy answer (stale-if-error, stale-while-revalidate)? Not after must-revalidate,
   * proxy-revalidate, or s-maxage, which implies proxy-revalidate (RFC 9111 sections 4.2.4, 5.2.2.10).
   */
  readonly staleAllowed: boolean;
}

const NONE: UpstreamFreshness = Object.freeze({ noStore: false, maxAgeSeconds: null, staleAllowed: true });
const NONE_AUTHORIZED: UpstreamFreshness = Object.freeze({ noStore: true, maxAgeSeconds: null, staleAllowed: true });

/** RFC 9111 section 1.2.2: a delta-seconds past the greatest value we keep counts as 2^31. */
const MAX_DELTA_SECONDS = 2 ** 31;
/** A max-age or s-maxage that is not delta-seconds (1*DIGIT), or that was given twice with different values. */
const INVALID = -1;

/** delta-seconds (RFC 9111 section 1.2.2): digits only, so "-1", "5.5", "abc" and a missing value are INVALID. */
function deltaSeconds(value: string | null): number {
  return value !== null && /^\d+$/.test(value) ? Math.min(Number(value), MAX_DELTA_SECONDS) : INVALID;
}

/**
 * A directive seen again: the same value is harmless, a different one is conflicting freshness,
 * which RFC 9111 section 4.2.1 lets a cache treat as stale. We do (the most restrictive reading).
 */
function again(previous: number | null, next: number): number {
  return previous === null || previous === next ? next : INVALID;
}

/** The list's members, split at commas outside quoted strings (RFC 9110 sections 5.6.1, 5.6.4). */
function members(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quoted && c === 0x5c)
      i++; // a quoted-pair: the next character is taken as it is
    else if (c === 0x22) quoted = !quoted;
    else if (c === 0x2c && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** A directive's argument in token or quoted-string form; recipients accept both (RFC 9111 section 5.2). */
function argument(text: string): string {
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return text;
  return text.slice(1, -1).replace(/\\(.)/g, '$1');
}

/**
 * The lifetime Expires gives (RFC 9111 sections 4.2.1, 5.3): Expires minus the upstream's Date,
 * or minus the time we received the answer when Date is missing or invalid. An Expires that is
 * not one valid HTTP-date (such as "0", or two lines) means already expired.
 */
function expiresLifetime(expires: string | string[], date: string | string[] | undefined, receivedAtMs: number): number {
  const expiresAtMs = typeof expires === 'string' ? parseHttpDate(expires, receivedAtMs) : null;
  if (expiresAtMs === null) return 0;
  const dateMs = (typeof date === 'string' ? parseHttpDate(date, receivedAtMs) : null) ?? receivedAtMs;
  const seconds = Math.floor((expiresAtMs - dateMs) / 1000);
  return seconds > 0 ? Math.min(seconds, MAX_DELTA_SECONDS) : 0;
}

/**
 * The freshness of an upstream answer for a shared cache (RFC 9111): its Cache-Control, and its
 * Expires when Cache-Control has neither max-age nor s-maxage (section 5.3). `receivedAtMs` is
 * when the answer arrived, by our clock. Invalid or conflicting freshness makes the answer stale
 * (lifetime 0): it is not stored, and our answer says max-age=0. `authorized`: the request
 * carried the client's Authorization (forwardAuthorization); then a shared cache may keep the
 * answer only when it says public, s-maxage or must-revalidate (section 3.5).
 */
export function freshnessOf(headers: ResponseHeaders, receivedAtMs: number, authorized = false): UpstreamFreshness {
  const cacheControl = headers['cache-control'];
  const expires = headers['expires'];
  if (cacheControl === undefined && expires === undefined) return authorized ? NONE_AUTHORIZED : NONE;
  let noStore = false;
  let sharedDespiteAuthorization = false;
  let maxAge: number | null = null;
  let sMaxAge: number | null = null;
  let staleAllowed = true;
  const text = cacheControl === undefined ? '' : Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl;
  for (const member of members(text)) {
    const eq = member.indexOf('=');
    const name = (eq === -1 ? member : member.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? null : argument(member.slice(eq + 1).trim());
    // A shared cache must not store private answers (5.2.2.7); no-cache needs revalidation we do
    // not do (5.2.2.4). Their qualified forms (private="x", no-cache="x") count as unqualified, as
    // both sections note many caches do: we would otherwise have to keep the answer minus fields.
    if (name === 'no-store' || name === 'private' || name === 'no-cache') noStore = true;
    else if (name === 'max-age') maxAge = again(maxAge, deltaSeconds(value));
    else if (name === 's-maxage') {
      sMaxAge = again(sMaxAge, deltaSeconds(value));
      staleAllowed = false;
      sharedDespiteAuthorization = true;
    } else if (name === 'must-revalidate') {
      staleAllowed = false;
      sharedDespiteAuthorization = true;
    } else if (name === 'proxy-revalidate') staleAllowed = false;
    else if (name === 'public') sharedDespiteAuthorization = true;
  }
  if (authorized && !sharedDespiteAuthorization) noStore = true;
  let lifetime: number | null;
  if (maxAge === INVALID || sMaxAge === INVALID) lifetime = 0;
  // s-maxage overrides max-age and Expires in a shared cache (5.2.2.10); max-age overrides Expires (5.3).
  else lifetime = sMaxAge ?? maxAge ?? (expires === undefined ? null : expiresLifetime(expires, headers['date'], receivedAtMs));
  return { noStore, maxAgeSeconds: lifetime, staleAllowed };
}
