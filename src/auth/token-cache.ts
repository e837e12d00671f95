import { hash } from 'node:crypto';
import type { AuthConfig } from '../config/types.ts';
import type { Clock } from '../lib/clock.ts';
import { GrowingLru } from '../lib/growing-lru.ts';
import type { ClaimValue } from './claims.ts';
import type { Principal } from './principal.ts';

/**
 * A verified token as the cache keeps it: what the gateway reads, not the token. The cache is
 * keyed by the token's SHA-256, so an entry costs the same whatever the token's length (a token
 * is 300-1,000+ characters; kept whole it was ~60% of an entry, bench/RESULTS.md, memory).
 */
export class VerifiedToken implements Principal {
  readonly subject: string | undefined;
  readonly scopes: ReadonlySet<string>;
  readonly expiresAtMs: number;
  readonly claims: readonly ClaimValue[];
  readonly #slot: number;

  constructor(subject: string | undefined, scopes: ReadonlySet<string>, expiresAtMs: number, claims: readonly ClaimValue[], slot: number) {
    this.#slot = slot;
    this.subject = subject;
    this.scopes = scopes;
    this.expiresAtMs = expiresAtMs;
    this.claims = claims;
  }

  /** The token's slot in the recent-token table (recentSlot), cleared when the cache drops the token. */
  get slot(): number {
    return this.#slot;
  }
}

/**
 * A verified token that names its plan (auth.planClaim set): a class apart, so tokens of a gateway
 * without plans keep no plan field at all.
 */
export class PlannedToken extends VerifiedToken {
  readonly plan: string | undefined;

  constructor(
    subject: string | undefined,
    scopes: ReadonlySet<string>,
    expiresAtMs: number,
    claims: readonly ClaimValue[],
    slot: number,
    plan: string | undefined,
  ) {
    super(subject, scopes, expiresAtMs, claims, slot);
    this.plan = plan;
  }
}

/**
 * The cache key of a token: its SHA-256 as a 32-character Latin-1 string ('binary'). Exact, as the
 * token itself would be (two tokens with one digest would be a SHA-256 collision), where a key of
 * the token's tail needed the whole token kept to compare. ~0.6 µs a lookup (node:crypto's one-shot
 * hash): a token used lately is found in the recent-token table first, without it.
 */
export function keyOf(token: string): string {
  return hash('sha256', token, 'binary');
}

/** Slots of the recent-token table, 2^16 (a 256 KB array): 10,000 tokens in use leave ~93% of them a slot of their own. */
const RECENT_BITS = 16;
const RECENT_SLOTS = 1 << RECENT_BITS;
/**
 * Most bytes the recent-token table holds (its tokens' characters and ~64 bytes each for the
 * string and slot), and never more than an eighth of auth.tokenCacheMaxBytes: long tokens fill
 * fewer slots, never more memory. The cache's own bound does not count them.
 */
const RECENT_MAX_BYTES = 4 * 1024 * 1024;
const RECENT_SLOT_BYTES = 64;

/**
 * A token's slot in the recent-token table: three characters before the last of its signature
 * (the last may carry padding bits only), random for a signed token, mixed into RECENT_BITS bits. Tokens
 * that share a slot only take turns in it: each is found by its digest when the other holds it.
 */
export function recentSlot(token: string): number {
  const n = token.length;
  const chars = token.charCodeAt(n - 2) | (token.charCodeAt(n - 3) << 8) | (token.charCodeAt(n - 4) << 16);
  return Math.imul(chars, 0x9e3779b1) >>> (32 - RECENT_BITS);
}

/**
 * The token as a string of its own. The one a request brings is V8's slice of its Authorization
 * header: kept as is, it keeps the whole header alive, "Bearer " and any run of spaces after it
 * (RFC 6750 allows 1*SP, up to auth.maxTokenBytes), which the table's byte bound does not charge.
 * Made only when a token enters the table, never on a hit.
 */
function ownCopy(token: string): string {
  return Buffer.from(token, 'latin1').toString('latin1');
}

/** A token and its principal in the recent-token table: the token kept whole (a copy of its own), to compare. */
class RecentToken {
  readonly token: string;
  readonly principal: VerifiedToken;

  constructor(token: string, principal: VerifiedToken) {
    this.token = ownCopy(token);
    this.principal = principal;
  }
}

/**
 * What a cache entry costs, in bytes: the LRU's slot in its arrays and key map, the 32-character
 * digest key and the principal (which is the cached entry itself). Measured with 20,000 308-character
 * ES256 tokens through a gateway on Node 20 (heap growth after GC): 257 bytes a token in all, with
 * a 12-character subject; so 256 plus the subject's and claims' charge below errs high, never low.
 */
const ENTRY_BYTES = 256;

/**
 * Bytes one entry is charged: the subject's, consumer's, plan's and the kept claims' characters
 * (two each, in case they are two-byte strings; 8 per slot), and ENTRY_BYTES. Not the token's: it is not kept.
 * The kept scope set is shared and bounded apart (principal.ts, KeptScopes).
 */
function entryBytes(principal: Principal): number {
  let claims = 0;
  for (const value of principal.claims) claims += 8 + (typeof value === 'string' ? 2 * value.length : 0);
  return ENTRY_BYTES + 2 * ((principal.subject?.length ?? 0) + (principal.consumer?.length ?? 0) + (principal.plan?.length ?? 0)) + claims;
}

/**
 * The verified tokens: an LRU bounded by count and by bytes, keyed by the token's digest, and in
 * front of it the recent-token table, the tokens used lately, whole, one per slot (recentSlot): a
 * hit there is a comparison, no digest and no LRU lookup. The table is bounded by RECENT_SLOTS
 * whatever the cache's size, and filled only with tokens the cache holds or has just verified, so
 * it answers only what the cache would.
 */
export class TokenCache {
  readonly #clock: Clock;
  readonly #cache: GrowingLru<string, VerifiedToken>;
  readonly #maxTokenBytes: number;
  readonly #recent: (RecentToken | undefined)[] = new Array<RecentToken | undefined>(RECENT_SLOTS);
  readonly #recentMaxBytes: number;
  #recentBytes = 0;

  constructor(auth: AuthConfig, clock: Clock) {
    this.#clock = clock;
    // A token the cache drops (evicted, expired) leaves the recent-token table too: it answers only what the cache would.
    this.#cache = new GrowingLru<string, VerifiedToken>(auth.tokenCacheMaxEntries, {
      maxSize: auth.tokenCacheMaxBytes,
      dispose: (principal) => this.#forget(principal),
    });
    this.#recentMaxBytes = Math.min(RECENT_MAX_BYTES, Math.floor(auth.tokenCacheMaxBytes / 8));
    this.#maxTokenBytes = auth.tokenCacheMaxTokenBytes;
  }

  get size(): number {
    return this.#cache.size;
  }

  /** Bytes the recent-token table holds (RECENT_MAX_BYTES, or an eighth of auth.tokenCacheMaxBytes, at most). */
  get recentBytes(): number {
    return this.#recentBytes;
  }

  /** Bytes charged to the cached tokens (bounded by auth.tokenCacheMaxBytes). */
  get cachedBytes(): number {
    return this.#cache.calculatedSize;
  }

  /** The hot path: the principal of a token verified before and not yet expired. No crypto, no promise. */
  get(token: string): VerifiedToken | undefined {
    const slot = recentSlot(token);
    const recent = this.#recent[slot];
    let principal: VerifiedToken | undefined;
    if (recent !== undefined && recent.token === token) principal = recent.principal;
    else {
      principal = this.#cache.get(keyOf(token));
      if (principal === undefined) return undefined;
    }
    if (principal.expiresAtMs <= this.#clock.now()) {
      // Leaves the recent-token table as well (dispose).
      this.#cache.delete(keyOf(token));
      return undefined;
    }
    if (recent?.principal !== principal) this.#remember(token, principal);
    return principal;
  }

  /**
   * Keeps a token just verified at `nowMs`, never past its `exp`. Envoy's jwt_authn caches no
   * token over 4 KB either (auth.tokenCacheMaxTokenBytes): a few such tokens would crowd out many.
   */
  add(token: string, principal: VerifiedToken, nowMs: number): void {
    if (principal.expiresAtMs <= nowMs || token.length > this.#maxTokenBytes) return;
    const key = keyOf(token);
    this.#cache.set(key, principal, { size: entryBytes(principal) });
    // Unless the cache refused it (larger than its whole bound).
    if (this.#cache.peek(key) === principal) this.#remember(token, principal);
  }

  /** Puts a cached token in its slot of the recent-token table, in place of the one there, within its byte bound. */
  #remember(token: string, principal: VerifiedToken): void {
    const held = this.#recent[principal.slot];
    const bytes = this.#recentBytes - (held === undefined ? 0 : held.token.length + RECENT_SLOT_BYTES) + token.length + RECENT_SLOT_BYTES;
    if (bytes > this.#recentMaxBytes) return;
    this.#recentBytes = bytes;
    this.#recent[principal.slot] = new RecentToken(token, principal);
  }

  #forget(principal: VerifiedToken): void {
    const held = this.#recent[principal.slot];
    if (held?.principal !== principal) return;
    this.#recentBytes -= held.token.length + RECENT_SLOT_BYTES;
    this.#recent[principal.slot] = undefined;
  }
}
