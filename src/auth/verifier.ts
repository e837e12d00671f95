import { hash } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, type CompactJWSHeaderParameters, type JWTPayload, type JWTVerifyOptions, type JWTVerifyResult } from 'jose';
import { GrowingLru } from '../lib/growing-lru.ts';
import type { Clock } from '../lib/clock.ts';
import type { AuthConfig } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import { assertTokenSyntax } from './bearer.ts';
import { invalidToken } from './challenge.ts';
import type { TokenTally } from '../observability/metrics.ts';
import type { KeySource } from './keys.ts';
import { ClaimTable, type ClaimValue } from './claims.ts';
import { KeysUnavailableError } from './remote-keys.ts';
import { scopesOf } from './scopes.ts';

/**
 * What a verified token says about its bearer; cached by the token's digest (see keyOf). Only what the
 * gateway reads is kept, never the payload: with 100,000 tokens cached this is most of the token
 * cache's memory. (Claims forwarded upstream would be one more field here, filled from a
 * configured list of claim names, and charged in `entryBytes`.)
 */
export interface Principal {
  readonly subject: string | undefined;
  /** The scopes the gateway checks (`keptScopes`) that the token has; no other scope is kept. */
  readonly scopes: ReadonlySet<string>;
  /** The token's `exp`, in ms: the cache entry is dropped at this instant. */
  readonly expiresAtMs: number;
  /** The claims the gateway reads (owner rules, forwardClaims), in ClaimTable order. */
  readonly claims: readonly ClaimValue[];
}

/**
 * A verified token as the cache keeps it: what the gateway reads, not the token. The cache is
 * keyed by the token's SHA-256, so an entry costs the same whatever the token's length (a token
 * is 300-1,000+ characters; kept whole it was ~60% of an entry, bench/RESULTS.md, memory).
 */
class VerifiedToken implements Principal {
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
 * The cache key of a token: its SHA-256 as a 32-character Latin-1 string ('binary'). Exact, as the
 * token itself would be (two tokens with one digest would be a SHA-256 collision), where a key of
 * the token's tail needed the whole token kept to compare. ~0.6 µs a lookup (node:crypto's one-shot
 * hash): a token used lately is found in the recent-token table first, without it.
 */
function keyOf(token: string): string {
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

/** Distinct kept-scope sets remembered for sharing; past this the table starts over (it is only a saving). */
const MAX_SHARED_SCOPE_SETS = 1024;

/**
 * What a cache entry costs, in bytes: the LRU's slot in its arrays and key map, the 32-character
 * digest key and the principal (which is the cached entry itself). Measured with 20,000 308-character
 * ES256 tokens through a gateway on Node 20 (heap growth after GC): 257 bytes a token in all, with
 * a 12-character subject; so 256 plus the subject's and claims' charge below errs high, never low.
 */
const ENTRY_BYTES = 256;

/**
 * Bytes one entry is charged: the subject's and the kept claims' characters (two each, in case
 * they are two-byte strings; 8 per slot), and ENTRY_BYTES. Not the token's: it is not kept.
 * The kept scope set is shared and bounded apart (MAX_SHARED_SCOPE_SETS sets of at most keptScopes each).
 */
function entryBytes(principal: Principal): number {
  let claims = 0;
  for (const value of principal.claims) claims += 8 + (typeof value === 'string' ? 2 * value.length : 0);
  return ENTRY_BYTES + 2 * (principal.subject?.length ?? 0) + claims;
}

/** What every verification passes jose; `currentDate` is added per token (verifyOptionsAt). */
export interface VerifyOptions {
  readonly algorithms: string[];
  readonly clockTolerance: number;
  readonly requiredClaims: string[];
  readonly issuer: string | undefined;
  readonly audience: string | undefined;
}

/**
 * The options of one verification. Every key written out, not `{ ...options, currentDate }`: once
 * optimised, V8 (Node 20) gives each such spread-and-add object a hidden class of its own, so every
 * new token left a map and a descriptor array in the old generation (bench/RESULTS.md, memory).
 */
export function verifyOptionsAt(options: VerifyOptions, nowMs: number): JWTVerifyOptions {
  return {
    algorithms: options.algorithms,
    clockTolerance: options.clockTolerance,
    requiredClaims: options.requiredClaims,
    issuer: options.issuer,
    audience: options.audience,
    currentDate: new Date(nowMs),
  };
}

/** The protected header of a compact token when jose would go on to look for its key, else undefined (see #jwtVerify). */
function plainHeader(token: string, algorithms: readonly string[]): CompactJWSHeaderParameters | undefined {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg) || header.crit !== undefined || header.b64 !== undefined) return undefined;
  // Its alg is a string: what CompactJWSHeaderParameters adds to the decoded header's type.
  return header as CompactJWSHeaderParameters;
}

/**
 * Is the token's signature segment the one canonical BASE64URL spelling of its bytes (RFC 7515
 * section 2; RFC 4648 section 3.5)? No '=' padding, and the bits of the last character that carry
 * no byte at zero: jose decodes any value there (and the padding) to the same signature, so every
 * other spelling would verify as another token, with its own cache entry. A length that leaves one
 * character over is no encoding at all. Anything outside the alphabet jose refuses itself.
 */
function isCanonicalSignature(token: string): boolean {
  const length = token.length - token.lastIndexOf('.') - 1;
  const last = base64UrlValue(token.charCodeAt(token.length - 1));
  if (last === -1 || length % 4 === 1) return false;
  const spare = length % 4 === 2 ? 15 : length % 4 === 3 ? 3 : 0;
  return (last & spare) === 0;
}

/** The 6-bit value of a BASE64URL character; -1 for any other, '=' included. */
function base64UrlValue(c: number): number {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c === 0x2d) return 62;
  if (c === 0x5f) return 63;
  return -1;
}

/** RFC 8725 section 3.11 / RFC 9068: an access token's `typ`, when present, must say JWT. */
const ACCEPTED_TYP = new Set(['jwt', 'application/jwt', 'at+jwt', 'application/at+jwt']);

function describeJoseFailure(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'the token is not yet valid';
    if (err.claim === 'iss') return 'unexpected issuer';
    if (err.claim === 'aud') return 'unexpected audience';
    if (err.claim === 'exp') return 'the token has no valid exp claim';
    return `invalid ${err.claim} claim`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the signing algorithm is not allowed';
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key matches the token';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'more than one key matches the token';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'the token is malformed';
  if (err instanceof errors.JOSENotSupported) return 'the token uses an unsupported feature';
  return 'the token could not be verified';
}

/**
 * Verifies bearer tokens with jose and keeps the verified ones in an LRU bounded by count and by
 * bytes. Concurrent verifications of one token are one verification (single-flight): the waiters
 * share its result, and a failure is never cached.
 */
export class TokenVerifier {
  readonly #keys: KeySource;
  readonly #clock: Clock;
  readonly #cache: GrowingLru<string, VerifiedToken>;
  readonly #options: VerifyOptions;
  readonly #claims: ClaimTable;
  readonly #keptScopes: readonly string[];
  readonly #maxTokenBytes: number;
  readonly #scopeSets = new Map<string, ReadonlySet<string>>();
  readonly #pending = new Map<string, Promise<Principal>>();
  /**
   * The tokens used lately, whole, one per slot (recentSlot): a hit is a comparison, no digest
   * and no LRU lookup. Bounded by RECENT_SLOTS whatever the cache's size, and filled only with
   * tokens the cache holds or has just verified, so it answers only what the cache would.
   */
  readonly #recent: (RecentToken | undefined)[] = new Array<RecentToken | undefined>(RECENT_SLOTS);
  readonly #recentMaxBytes: number;
  #recentBytes = 0;
  /** Cache hits and verification results, read by /metrics. */
  readonly tally: TokenTally;

  /** `keptScopes`: every scope the gateway may check (a principal keeps only those); `claims`: the claims it reads. */
  constructor(auth: AuthConfig, keys: KeySource, clock: Clock, keptScopes: readonly string[], tally: TokenTally = { cacheHits: 0, verified: 0, rejected: 0, keysUnavailable: 0 }, claims: ClaimTable = new ClaimTable([])) {
    this.tally = tally;
    this.#keys = keys;
    this.#clock = clock;
    // A token the cache drops (evicted, expired) leaves the recent-token table too: it answers only what the cache would.
    this.#cache = new GrowingLru<string, VerifiedToken>(auth.tokenCacheMaxEntries, { maxSize: auth.tokenCacheMaxBytes, dispose: (principal) => this.#forget(principal) });
    this.#recentMaxBytes = Math.min(RECENT_MAX_BYTES, Math.floor(auth.tokenCacheMaxBytes / 8));
    this.#claims = claims;
    this.#keptScopes = [...new Set(keptScopes)];
    this.#maxTokenBytes = auth.tokenCacheMaxTokenBytes;
    this.#options = {
      algorithms: [...keys.algorithms],
      clockTolerance: auth.clockToleranceSeconds,
      requiredClaims: ['exp'],
      // jose checks each only when it is not undefined.
      issuer: auth.issuer ?? undefined,
      audience: auth.audience ?? undefined,
    };
  }

  get cachedTokens(): number {
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

  /** The hot path: a token verified before and not yet expired. No crypto, no promise. */
  cached(token: string): Principal | undefined {
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
    this.tally.cacheHits++;
    if (recent?.principal !== principal) this.#remember(token, principal);
    return principal;
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

  /** The checked scopes the token has, as a set shared by every token with the same ones. */
  #keptScopesOf(payload: JWTPayload): ReadonlySet<string> {
    const all = scopesOf(payload);
    const kept = this.#keptScopes.filter((s) => all.has(s));
    const key = kept.join(' ');
    let scopes = this.#scopeSets.get(key);
    if (scopes === undefined) {
      if (this.#scopeSets.size >= MAX_SHARED_SCOPE_SETS) this.#scopeSets.clear();
      scopes = new Set(kept);
      this.#scopeSets.set(key, scopes);
    }
    return scopes;
  }

  /** Full verification with jose, one at a time per token; only successes are cached, and never past `exp`. */
  verify(token: string): Promise<Principal> {
    let pending = this.#pending.get(token);
    if (pending === undefined) {
      pending = this.#verify(token);
      this.#pending.set(token, pending);
      const settled = (): void => {
        this.#pending.delete(token);
      };
      pending.then(settled, settled);
    }
    return pending;
  }

  /**
   * jose's verification, given the token's key when its header is one jose takes as it is (found
   * the way jose would: our getKey, with the parsed header), else given the getKey function. Given
   * a function, jose returns `{ ...result, key }`, which V8 (Node 20) gives a hidden class of its
   * own per token once optimised (bench/RESULTS.md, memory). A token whose header does not parse,
   * or names an algorithm not allowed, `crit` or `b64`, goes to jose with the function, which
   * rejects it with the error it always gave.
   */
  async #jwtVerify(token: string, options: JWTVerifyOptions): Promise<JWTVerifyResult> {
    const header = plainHeader(token, this.#options.algorithms);
    if (header === undefined) return jwtVerify(token, this.#keys.getKey, options);
    const first = token.indexOf('.');
    const second = token.indexOf('.', first + 1);
    const key = await this.#keys.getKey(header, { protected: token.slice(0, first), payload: token.slice(first + 1, second), signature: token.slice(second + 1) });
    return jwtVerify(token, key, options);
  }

  async #verify(token: string): Promise<Principal> {
    assertTokenSyntax(token);
    const nowMs = this.#clock.now();
    let payload: JWTPayload;
    try {
      // One signature, one spelling (isCanonicalSignature). Checked only here, before verifying:
      // a token spelled otherwise is never cached, so the cached path pays nothing for it.
      if (!isCanonicalSignature(token)) throw invalidToken('the token is malformed');
      const result = await this.#jwtVerify(token, verifyOptionsAt(this.#options, nowMs));
      const typ = result.protectedHeader.typ;
      if (typ !== undefined && !ACCEPTED_TYP.has(typ.toLowerCase())) throw invalidToken('unexpected token type');
      payload = result.payload;
    } catch (err) {
      // The key server failed (no key set, or the fetch this token waited for): ours, not the client's.
      if (err instanceof KeysUnavailableError) {
        this.tally.keysUnavailable++;
        throw new HgError('HG_ERR_AUTH_KEYS_UNAVAILABLE', { headers: { 'Retry-After': String(err.retryAfterSeconds) }, cause: err });
      }
      this.tally.rejected++;
      if (err instanceof HgError) throw err;
      throw invalidToken(describeJoseFailure(err), err);
    }
    this.tally.verified++;
    // jose does not check that `sub` is a string (RFC 7519 section 4.1.2 says it is): anything else is no subject.
    const principal = new VerifiedToken(typeof payload.sub === 'string' ? payload.sub : undefined, this.#keptScopesOf(payload), (payload.exp ?? 0) * 1000, this.#claims.keep(payload), recentSlot(token));
    // Envoy's jwt_authn caches no token over 4 KB either: a few such tokens would crowd out many.
    if (principal.expiresAtMs > nowMs && token.length <= this.#maxTokenBytes) {
      const key = keyOf(token);
      this.#cache.set(key, principal, { size: entryBytes(principal) });
      // Unless the cache refused it (larger than its whole bound).
      if (this.#cache.peek(key) === principal) this.#remember(token, principal);
    }
    return principal;
  }
}
