import { performance } from 'node:perf_hooks';
import { decodeProtectedHeader, type JWTPayload } from 'jose';
import type { AuthConfig } from '../config/types.ts';
import { CircuitBreaker, PROBE } from '../lib/breaker.ts';
import type { Clock } from '../lib/clock.ts';
import { HgError } from '../lib/errors.ts';
import { GrowingLru } from '../lib/growing-lru.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { Logger } from '../observability/logger.ts';
import type { IntrospectionObserver } from '../observability/metrics.ts';
import { assertTokenSyntax } from './bearer.ts';
import { invalidToken } from './challenge.ts';
import type { ClaimTable } from './claims.ts';
import { basicCredentials, introspect, IntrospectionError, type IntrospectionAnswer, type IntrospectionCallOptions } from './introspection-call.ts';
import { IntrospectedToken } from './introspected-token.ts';
import { KeptScopes, type Principal } from './principal.ts';
import { keyOf, recentSlot, TokenCache } from './token-cache.ts';

/** Inactive answers remembered at most: past this the oldest go (a forgotten one is only asked again). */
const MAX_INACTIVE = 10_000;

/** At most one warning about failed calls per this long: an outage with the breaker off fails every call. */
const WARN_EVERY_MS = 1000;

export interface IntrospectorDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly observer: IntrospectionObserver;
}

/**
 * Is the token not a JWT? A JWT is three dot-separated segments whose first is a protected
 * header jose can read (JWS compact serialization, RFC 7515 section 7.1); anything else is an
 * opaque token, for the introspection endpoint.
 */
export function isOpaqueToken(token: string): boolean {
  const first = token.indexOf('.');
  const second = first === -1 ? -1 : token.indexOf('.', first + 1);
  if (second === -1 || token.indexOf('.', second + 1) !== -1) return true;
  try {
    decodeProtectedHeader(token);
    return false;
  } catch {
    return true;
  }
}

/** What the client of a token the endpoint could not answer for gets: 503 with Retry-After, never 401. */
function unavailable(retryAfterSeconds: number, cause: unknown): HgError {
  return new HgError('HG_ERR_AUTH_INTROSPECTION_UNAVAILABLE', { headers: { 'Retry-After': String(retryAfterSeconds) }, cause });
}

/** Longest plan name kept from an answer (a declared plan's name is at most 64 characters): a longer one names no plan. */
const MAX_PLAN_CHARS = 64;

/** A string field of the answer, or undefined. */
function text(answer: IntrospectionAnswer, field: string): string | undefined {
  const value = answer[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Opaque bearer tokens, read by the identity provider's introspection endpoint (RFC 7662,
 * `auth.introspection`). An active answer becomes a principal as a verified JWT's payload does
 * (the same kept scopes and claims), kept in a token cache of its own with the verified-token
 * cache's bounds and memory discipline (keyed by the token's digest, never the token), until the
 * earlier of the token's `exp` and `maxCacheSeconds`. An inactive answer is kept for
 * `inactiveCacheSeconds` and answered 401. Concurrent requests with one token not yet known make
 * one call (lib/single-flight.ts); the endpoint's failures (refused, time-out, a status other
 * than 200, an answer that is not one) answer 503 with Retry-After and count towards a circuit
 * breaker, which, open, answers at once without calling.
 */
export class Introspector {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #observer: IntrospectionObserver;
  readonly #call: IntrospectionCallOptions;
  readonly #maxCacheMs: number;
  readonly #inactiveCacheMs: number;
  readonly #toleranceMs: number;
  readonly #planField: string | null;
  readonly #breakerCooldownMs: number;
  readonly #tokens: TokenCache;
  /** Digest of an inactive token → until when it is answered 401 without a call, in ms. */
  readonly #inactive = new GrowingLru<string, number>(MAX_INACTIVE);
  readonly #calls = new SingleFlight<Principal>();
  readonly #breaker: CircuitBreaker;
  readonly #scopes: KeptScopes;
  readonly #claims: ClaimTable;
  #warnedAtMs = Number.NEGATIVE_INFINITY;
  /** Failed calls not logged since the last warning. */
  #unlogged = 0;

  /** `auth.introspection.url` must be set; `env` holds the client credentials' variables. */
  constructor(auth: AuthConfig, env: NodeJS.ProcessEnv, keptScopes: readonly string[], claims: ClaimTable, deps: IntrospectorDeps) {
    const settings = auth.introspection;
    if (settings.url === null) throw new Error('auth.introspection.url is not set');
    const credential = (value: typeof settings.clientId): string => (value === null ? '' : typeof value === 'string' ? value : (env[value.env] ?? ''));
    this.#call = {
      url: new URL(settings.url),
      authorization: basicCredentials(credential(settings.clientId), credential(settings.clientSecret)),
      timeoutMs: settings.timeoutMs,
      maxBytes: settings.maxBytes,
    };
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#observer = deps.observer;
    this.#maxCacheMs = settings.maxCacheSeconds * 1000;
    this.#inactiveCacheMs = settings.inactiveCacheSeconds * 1000;
    this.#toleranceMs = auth.clockToleranceSeconds * 1000;
    this.#planField = settings.planField;
    this.#breakerCooldownMs = settings.breaker.cooldownMs;
    this.#tokens = new TokenCache(auth, deps.clock);
    this.#breaker = new CircuitBreaker(settings.breaker, deps.clock);
    this.#scopes = new KeptScopes(keptScopes);
    this.#claims = claims;
  }

  /** Tokens whose active answer is kept. */
  get cachedTokens(): number {
    return this.#tokens.size;
  }

  /** A token whose active answer is kept and not yet expired: no call, no promise. */
  cached(token: string): Principal | undefined {
    const principal = this.#tokens.get(token);
    if (principal !== undefined) this.#observer.introspection.cacheHits++;
    return principal;
  }

  /** The token's principal from the endpoint (one call at a time per token), or its refusal: 401 inactive, 503 unavailable. */
  async introspect(token: string): Promise<Principal> {
    assertTokenSyntax(token);
    const key = keyOf(token);
    const until = this.#inactive.get(key);
    if (until !== undefined) {
      if (until > this.#clock.now()) {
        this.#observer.introspection.inactiveHits++;
        throw invalidToken('the token is not active');
      }
      this.#inactive.delete(key);
    }
    return this.#calls.run(key, () => this.#ask(token, key));
  }

  async #ask(token: string, key: string): Promise<Principal> {
    const tally = this.#observer.introspection;
    const admitted = this.#breaker.admit();
    if (admitted > 0) {
      tally.breakerOpen++;
      throw unavailable(Math.max(1, Math.ceil(admitted / 1000)), null);
    }
    const probe = admitted === PROBE;
    const started = performance.now();
    let answer: IntrospectionAnswer;
    try {
      answer = await introspect(token, this.#call);
    } catch (err) {
      const failure = err instanceof IntrospectionError ? err : new IntrospectionError('unreachable', (err as Error).message, err);
      this.#breaker.failed(probe);
      tally.calls[failure.result]++;
      this.#observer.introspectionCall(failure.result, performance.now() - started);
      const open = this.#breaker.state === 'open';
      this.#warn(failure, open);
      throw unavailable(open ? Math.max(1, Math.ceil(this.#breakerCooldownMs / 1000)) : 1, failure);
    }
    this.#breaker.succeeded(probe);
    const nowMs = this.#clock.now();
    const exp = typeof answer.exp === 'number' && Number.isFinite(answer.exp) ? answer.exp * 1000 : Number.POSITIVE_INFINITY;
    // An answer that says active for a token past its exp is not believed (the endpoint's clock, or a cache of its own).
    if (!answer.active || exp + this.#toleranceMs <= nowMs) {
      tally.calls.inactive++;
      this.#observer.introspectionCall('inactive', performance.now() - started);
      if (this.#inactiveCacheMs > 0) this.#inactive.set(key, nowMs + this.#inactiveCacheMs);
      throw invalidToken(answer.active ? 'the token has expired' : 'the token is not active');
    }
    tally.calls.active++;
    this.#observer.introspectionCall('active', performance.now() - started);
    const principal = this.#principalOf(token, answer, Math.min(exp, nowMs + this.#maxCacheMs));
    this.#tokens.add(token, principal, nowMs);
    return principal;
  }

  /** A failed call's warning (the URL and the cause, never the token), at most one per WARN_EVERY_MS; the ones left out are counted in the next. */
  #warn(failure: IntrospectionError, open: boolean): void {
    const nowMs = this.#clock.now();
    if (nowMs - this.#warnedAtMs < WARN_EVERY_MS) {
      this.#unlogged++;
      return;
    }
    const more = this.#unlogged;
    this.#warnedAtMs = nowMs;
    this.#unlogged = 0;
    const url = this.#call.url.href;
    this.#logger.warn(
      `could not introspect a token at ${url}: ${failure.message}; it gets 503${open ? ' (the introspection breaker is open)' : ''}${more > 0 ? ` (${more} more failed calls since the last warning)` : ''}`,
      { event: 'introspection', url, result: failure.result, cause: failure.message, unlogged: more },
    );
  }

  /** The plan field's value as kept: a short string, else none (the default plan applies). */
  #planOf(answer: IntrospectionAnswer): string | undefined {
    const plan = this.#planField === null ? undefined : text(answer, this.#planField);
    return plan !== undefined && plan.length <= MAX_PLAN_CHARS ? plan : undefined;
  }

  /**
   * An active answer as a principal: `sub` its subject, or, for a token issued to a client on its
   * own behalf (client credentials, no `sub`), its `client_id`; `scope` (space-separated) and the
   * claims the gateway reads kept as a JWT's are; `client_id` its consumer; the plan field its plan.
   */
  #principalOf(token: string, answer: IntrospectionAnswer, expiresAtMs: number): IntrospectedToken {
    // The answer is a JSON object of claims, as a JWT's payload is (RFC 7662 section 2.2).
    const claims = answer as JWTPayload;
    const clientId = text(answer, 'client_id');
    return new IntrospectedToken(
      text(answer, 'sub') ?? clientId,
      this.#scopes.of(claims),
      expiresAtMs,
      this.#claims.keep(claims),
      recentSlot(token),
      clientId,
      this.#planOf(answer),
    );
  }
}
