import { decodeProtectedHeader, jwtVerify, type CompactJWSHeaderParameters, type JWTPayload, type JWTVerifyOptions, type JWTVerifyResult } from 'jose';
import type { AuthConfig } from '../config/types.ts';
import type { Clock } from '../lib/clock.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { TokenTally } from '../observability/metrics.ts';
import { assertTokenSyntax, isCanonicalSignature } from './bearer.ts';
import { invalidToken } from './challenge.ts';
import { ClaimTable } from './claims.ts';
import { verificationError } from './jose-errors.ts';
import { isOpaqueToken, type Introspector } from './introspection.ts';
import type { KeySource } from './keys.ts';
import { KeptScopes, type Principal } from './principal.ts';
import { PlannedToken, recentSlot, TokenCache, VerifiedToken } from './token-cache.ts';

// Where callers have always found them (bench/micro reads recentSlot from here).
export type { Principal };
export { recentSlot };

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

/** RFC 8725 section 3.11 / RFC 9068: an access token's `typ`, when present, must say JWT. */
const ACCEPTED_TYP = new Set(['jwt', 'application/jwt', 'at+jwt', 'application/at+jwt']);

/**
 * Verifies bearer tokens with jose and keeps the verified ones (token-cache.ts). Concurrent
 * verifications of one token are one verification (lib/single-flight.ts): the waiters share its
 * result, and a failure is never cached.
 *
 * Keys come from our own key source (keys.ts, remote-keys.ts), not jose's createRemoteJWKSet: that
 * one reads a key set whole whatever its size, keeps no last good set when a refresh fails once
 * its cache age passes, retries a failing key server for any unknown kid with no cooldown between
 * failures, and reads Date.now() rather than an injected clock. Ours bounds the key set in bytes
 * and keys, keeps the last good set through an outage, answers 503 with Retry-After (never 401)
 * while it has none, and reports each fetch in the metrics and the log.
 */
export class TokenVerifier {
  readonly #keys: KeySource;
  readonly #clock: Clock;
  readonly #tokens: TokenCache;
  readonly #options: VerifyOptions;
  readonly #claims: ClaimTable;
  /** auth.planClaim: the claim naming a token's plan, kept only when set. */
  readonly #planClaim: string | null;
  readonly #scopes: KeptScopes;
  readonly #verifying = new SingleFlight<Principal>();
  readonly #introspector: Introspector | null;
  /** Cache hits and verification results, read by /metrics. */
  readonly tally: TokenTally;

  /** `keptScopes`: every scope the gateway may check (a principal keeps only those); `claims`: the claims it reads. */
  constructor(
    auth: AuthConfig,
    keys: KeySource,
    clock: Clock,
    keptScopes: readonly string[],
    tally: TokenTally = { cacheHits: 0, verified: 0, rejected: 0, keysUnavailable: 0 },
    claims: ClaimTable = new ClaimTable([]),
    introspector: Introspector | null = null,
  ) {
    this.tally = tally;
    this.#introspector = introspector;
    this.#keys = keys;
    this.#clock = clock;
    this.#tokens = new TokenCache(auth, clock);
    this.#claims = claims;
    this.#planClaim = auth.planClaim;
    this.#scopes = new KeptScopes(keptScopes);
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
    return this.#tokens.size;
  }

  /** Bytes the recent-token table holds (token-cache.ts). */
  get recentBytes(): number {
    return this.#tokens.recentBytes;
  }

  /** Bytes charged to the cached tokens (bounded by auth.tokenCacheMaxBytes). */
  get cachedBytes(): number {
    return this.#tokens.cachedBytes;
  }

  /**
   * The hot path: a token verified before and not yet expired. No crypto, no promise. An opaque
   * token's kept introspection answer is looked up only once the verified tokens lack it.
   */
  cached(token: string): Principal | undefined {
    const principal = this.#tokens.get(token);
    if (principal !== undefined) {
      this.tally.cacheHits++;
      return principal;
    }
    return this.#introspector?.cached(token);
  }

  /**
   * Full verification with jose, one at a time per token; only successes are cached, and never past
   * `exp`. A token that is not a JWT goes to the introspection endpoint instead, when one is configured.
   */
  verify(token: string): Promise<Principal> {
    if (this.#introspector !== null && isOpaqueToken(token)) return this.#introspector.introspect(token);
    return this.#verifying.run(token, () => this.#verify(token));
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
    const key = await this.#keys.getKey(header, {
      protected: token.slice(0, first),
      payload: token.slice(first + 1, second),
      signature: token.slice(second + 1),
    });
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
      throw verificationError(err, this.tally);
    }
    this.tally.verified++;
    // jose does not check that `sub` is a string (RFC 7519 section 4.1.2 says it is): anything else is no subject.
    const subject = typeof payload.sub === 'string' ? payload.sub : undefined;
    const scopes = this.#scopes.of(payload);
    const expiresAtMs = (payload.exp ?? 0) * 1000;
    const claims = this.#claims.keep(payload);
    const planClaim = this.#planClaim;
    const principal =
      planClaim === null
        ? new VerifiedToken(subject, scopes, expiresAtMs, claims, recentSlot(token))
        : new PlannedToken(subject, scopes, expiresAtMs, claims, recentSlot(token), planOf(payload[planClaim]));
    this.#tokens.add(token, principal, nowMs);
    return principal;
  }
}

/** Longest plan name kept from a token (a declared one is at most 64 characters): a longer one names no plan. */
const MAX_PLAN_CHARS = 64;

/** A plan claim's value as kept: a short string, else none (the default plan). */
function planOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_PLAN_CHARS ? value : undefined;
}
