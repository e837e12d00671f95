import { errors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import type { AuthConfig } from '../config/types.ts';
import { HgError } from '../errors.ts';
import { assertTokenSyntax } from './bearer.ts';
import { invalidToken } from './challenge.ts';
import type { TokenTally } from '../observability/metrics.ts';
import type { KeySource } from './keys.ts';
import { KeysUnavailableError } from './remote-keys.ts';
import { scopesOf } from './scopes.ts';

/**
 * What a verified token says about its bearer; cached by the token (see KEY_CHARS). Only what the
 * gateway reads is kept (not the whole payload), and tokens with the same scope claims share one
 * scope set: with 100,000 tokens cached this is most of the token cache's memory.
 */
export interface Principal {
  readonly subject: string | undefined;
  readonly scopes: ReadonlySet<string>;
  /** The token's `exp`, in ms: the cache entry is dropped at this instant. */
  readonly expiresAtMs: number;
  /** The value of the `auth.ownerClaim` claim; undefined when ownership is off or the claim is absent. */
  readonly owner: unknown;
}

/** A verified token: the whole token, so a lookup by its tail still compares all of it. */
interface CachedToken {
  readonly token: string;
  readonly principal: Principal;
}

/**
 * Characters of a token's end (its signature's) that key the cache. Hashing a fresh ~300-character
 * token string on every request cost ~430 ns against ~110-150 ns for 16 characters plus a full
 * comparison (bench/micro, token-cache). The comparison keeps it exact: a token that only shares
 * the tail with a cached one is a miss and is verified; two valid tokens sharing 16 characters of
 * signature (96 bits) would only evict each other.
 */
const KEY_CHARS = 16;

function keyOf(token: string): string {
  return token.length > KEY_CHARS ? token.slice(-KEY_CHARS) : token;
}

/** Distinct scope claims remembered for sharing; past this the table starts over (it is only a saving). */
const MAX_SHARED_SCOPE_SETS = 1024;

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

export class TokenVerifier {
  readonly #keys: KeySource;
  readonly #clock: Clock;
  readonly #cache: LRUCache<string, CachedToken>;
  readonly #options: Parameters<typeof jwtVerify>[2] & object;
  readonly #ownerClaim: string | null;
  readonly #scopeSets = new Map<string, ReadonlySet<string>>();
  /** Cache hits and verification results, read by /metrics. */
  readonly tally: TokenTally;

  constructor(auth: AuthConfig, keys: KeySource, clock: Clock, tally: TokenTally = { cacheHits: 0, verified: 0, rejected: 0, keysUnavailable: 0 }) {
    this.tally = tally;
    this.#keys = keys;
    this.#clock = clock;
    this.#cache = new LRUCache<string, CachedToken>({ max: auth.tokenCacheMaxEntries });
    this.#ownerClaim = auth.ownerClaim;
    this.#options = {
      algorithms: [...keys.algorithms],
      clockTolerance: auth.clockToleranceSeconds,
      requiredClaims: ['exp'],
      ...(auth.issuer === null ? {} : { issuer: auth.issuer }),
      ...(auth.audience === null ? {} : { audience: auth.audience }),
    };
  }

  get cachedTokens(): number {
    return this.#cache.size;
  }

  /** The hot path: a token verified before and not yet expired. No crypto, no promise. */
  cached(token: string): Principal | undefined {
    const key = keyOf(token);
    const entry = this.#cache.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    const { principal } = entry;
    if (principal.expiresAtMs > this.#clock.now()) {
      this.tally.cacheHits++;
      return principal;
    }
    this.#cache.delete(key);
    return undefined;
  }

  #sharedScopes(payload: JWTPayload): ReadonlySet<string> {
    const { scope, scp } = payload;
    // Prefixed so that no `scope` string can pose as the JSON of other claims and borrow their set.
    const key = typeof scope === 'string' && scp === undefined ? `s${scope}` : `j${JSON.stringify([scope ?? null, scp ?? null])}`;
    let scopes = this.#scopeSets.get(key);
    if (scopes === undefined) {
      if (this.#scopeSets.size >= MAX_SHARED_SCOPE_SETS) this.#scopeSets.clear();
      scopes = scopesOf(payload);
      this.#scopeSets.set(key, scopes);
    }
    return scopes;
  }

  /** Full verification with jose; only successes are cached, and never past `exp`. */
  async verify(token: string): Promise<Principal> {
    assertTokenSyntax(token);
    const nowMs = this.#clock.now();
    let payload: JWTPayload;
    try {
      const result = await jwtVerify(token, this.#keys.getKey, { ...this.#options, currentDate: new Date(nowMs) });
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
    const principal: Principal = {
      // jose does not check that `sub` is a string (RFC 7519 section 4.1.2 says it is): anything else is no subject.
      subject: typeof payload.sub === 'string' ? payload.sub : undefined,
      scopes: this.#sharedScopes(payload),
      expiresAtMs: (payload.exp ?? 0) * 1000,
      owner: this.#ownerClaim === null ? undefined : payload[this.#ownerClaim],
    };
    if (principal.expiresAtMs > nowMs) this.#cache.set(keyOf(token), { token, principal });
    return principal;
  }
}
