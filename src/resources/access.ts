import type { IncomingMessage } from 'node:http';
import { authorize, authorizeLimited, authorizePublicRead, type AuthGate, type LimitedGate } from '../auth/authenticate.ts';
import { insufficientScope, notOwner } from '../auth/challenge.ts';
import type { Principal } from '../auth/verifier.ts';
import type { ApiKeyAuthenticator } from '../auth/api-keys/authenticator.ts';
import type { GatewayContext } from './context.ts';
import type { ClientAddressOf } from '../protocol/client-address.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import type { RouteLimitConfig } from '../config/types.ts';
import { andThen } from '../lib/sync-or-promise.ts';
import type { JwksTally, TokenTally } from '../observability/metrics.ts';
import { tracedStep } from '../observability/traced-step.ts';
import type { HgRequest } from '../protocol/response.ts';
import type { CompiledResource } from './compile.ts';
import { paramFromValue, type ParamType, type ParamValue } from './params.ts';

/** The limiter of one route with its own limit (`limit` null: the gateway's alone). */
export type RouteLimiterOf = (route: string, limit: RouteLimitConfig | null) => Limiter | null;

/**
 * Who may read what. Every route needs its scope (a resource's `scope`, by default
 * auth.requiredScope). With an owner rule, a token reads only items whose owner parameter equals
 * its claim unless it holds auth.readAnyScope, and a collection whose path lacks that parameter
 * needs auth.readAnyScope. All of it is decided before the cache or the upstream is asked, so a
 * refusal says nothing about other items, not even that they exist.
 */
export class Access {
  readonly #readAny: string;
  /** What authorize() needs, made once here rather than per request. */
  readonly #gate: AuthGate;
  /** The same under the rate limit; null when rate limiting is off: then nothing of it runs. */
  readonly #limited: LimitedGate | null;
  /** Resources with a limit of their own (rateLimit, writeRateLimit): their gates for reads and for writes; null when none has one. */
  readonly #ownLimits: ReadonlyMap<string, { readonly read: LimitedGate | null; readonly write: LimitedGate | null }> | null;
  /** Tracing is on: the token is a span of its own (see #tracedScoped). */
  readonly #traced: boolean;
  readonly #tokens: TokenTally;
  readonly #jwks: JwksTally;

  /**
   * `clientAddress`: whose bucket a request without a valid token takes from (server.trustProxy);
   * `apiKeys`: auth.apiKeys, or null. `routeLimiter`: the limiter of a resource's reads or writes
   * (`resource:<name>`, `resource-write:<name>`) with its own limit, given only when some resource has one.
   */
  constructor(
    ctx: GatewayContext,
    limiter: Limiter | null,
    clientAddress: ClientAddressOf,
    apiKeys: ApiKeyAuthenticator | null = null,
    routeLimiter?: RouteLimiterOf,
  ) {
    this.#gate = { verifier: ctx.verifier, auth: ctx.config.auth, apiKeys };
    const gateOf = (l: Limiter | null): LimitedGate | null =>
      l === null ? null : { verifier: ctx.verifier, auth: ctx.config.auth, apiKeys, limiter: l, clientAddress };
    this.#limited = gateOf(limiter);
    this.#readAny = ctx.config.auth.readAnyScope;
    const own = new Map<string, { read: LimitedGate | null; write: LimitedGate | null }>();
    for (const [name, r] of Object.entries(ctx.config.resources)) {
      if (routeLimiter === undefined || (r.rateLimit === null && r.writeRateLimit === null)) continue;
      own.set(name, { read: gateOf(routeLimiter(`resource:${name}`, r.rateLimit)), write: gateOf(routeLimiter(`resource-write:${name}`, r.writeRateLimit)) });
    }
    this.#ownLimits = own.size === 0 ? null : own;
    this.#traced = ctx.traced;
    this.#tokens = ctx.metrics.tokens;
    this.#jwks = ctx.metrics.jwks;
  }

  /** Rate limiting is on: authorized routes may answer 429 (the OpenAPI document lists it). */
  get rateLimited(): boolean {
    return this.#limited !== null || this.#ownLimits !== null;
  }

  /** A scope only (API root, OpenAPI document): the principal, at once when its token is cached. */
  scoped(req: IncomingMessage, scope: string): Principal | Promise<Principal> {
    return this.#scopedUnder(req, scope, this.#limited);
  }

  #scopedUnder(req: IncomingMessage, scope: string, limited: LimitedGate | null): Principal | Promise<Principal> {
    if (this.#traced) return this.#tracedScoped(req, scope, limited);
    if (limited === null) return authorize(req, this.#gate, scope);
    return authorizeLimited(req, limited, scope);
  }

  /** The gate of a resource's reads or writes: its own limit's, else the gateway's. */
  #gateOf(r: CompiledResource, write: boolean): LimitedGate | null {
    const own = this.#ownLimits === null ? undefined : this.#ownLimits.get(r.name);
    if (own === undefined) return this.#limited;
    return write ? own.write : own.read;
  }

  /**
   * The token as a span (`token`) saying how it was found: `cached` (the verified-token cache),
   * `verified`, or `key refresh` when the key set was fetched while it waited (a rotated key).
   */
  #tracedScoped(req: IncomingMessage, scope: string, limited: LimitedGate | null): Principal | Promise<Principal> {
    const hits = this.#tokens.cacheHits;
    const fetches = fetchCount(this.#jwks);
    let cached = false;
    const authorized = (): Principal | Promise<Principal> => {
      try {
        return limited === null ? authorize(req, this.#gate, scope) : authorizeLimited(req, limited, scope);
      } finally {
        cached = this.#tokens.cacheHits > hits;
      }
    };
    return tracedStep((req as HgRequest).trace, 'token', authorized, (span) =>
      span.set('hypergate.token', cached ? 'cached' : fetchCount(this.#jwks) > fetches ? 'key refresh' : 'verified'),
    );
  }

  /**
   * A read of a public resource (item or collection): the rule every public read follows
   * (authorizePublicRead). A public resource has no owner rule (a start-up check), so the scope is
   * all there is to decide.
   */
  publicRead(req: IncomingMessage, r: CompiledResource): Principal | Promise<Principal> {
    return authorizePublicRead(req, this.#gate, this.#gateOf(r, false), r.scope);
  }

  /** The resource's scope plus its owner rule for the item with these values. */
  item(req: IncomingMessage, r: CompiledResource, values: readonly ParamValue[]): Principal | Promise<Principal> {
    const principal = this.#scopedUnder(req, r.scope, this.#gateOf(r, false));
    const owner = r.owner;
    if (owner === null) return principal;
    const value = values[owner.param] as ParamValue;
    const type = r.types[owner.param] as ParamType;
    if (principal instanceof Promise) return principal.then((p) => this.#requireOwner(p, owner, type, value));
    return this.#requireOwner(principal, owner, type, value);
  }

  /** The resource's scope, plus the owner rule on the collection's path or auth.readAnyScope when the path lacks the owner parameter. */
  collection(req: IncomingMessage, r: CompiledResource, values: readonly ParamValue[]): Principal | Promise<Principal> {
    const principal = this.#scopedUnder(req, r.scope, this.#gateOf(r, false));
    const owner = r.owner;
    const c = r.collection;
    if (owner === null || c === null) return principal;
    const check = (p: Principal): Principal => {
      if (c.ownerParam === -1) return this.#requireReadAny(p);
      return this.#requireOwner(p, owner, c.types[c.ownerParam] as ParamType, values[c.ownerParam] as ParamValue);
    };
    return andThen(principal, check);
  }

  /**
   * A write: the resource's writeScope, and its owner rule on the item (PUT, PATCH, DELETE) or on
   * the collection (POST; a collection whose path lacks the owner parameter needs auth.readAnyScope).
   */
  write(req: IncomingMessage, r: CompiledResource, values: readonly ParamValue[], onCollection: boolean): Principal | Promise<Principal> {
    const principal = this.#scopedUnder(req, r.writeScope, this.#gateOf(r, true));
    const owner = r.owner;
    if (owner === null) return principal;
    const c = r.collection;
    const check = (p: Principal): Principal => {
      if (!onCollection) return this.#requireOwner(p, owner, r.types[owner.param] as ParamType, values[owner.param] as ParamValue);
      if (c === null || c.ownerParam === -1) return this.#requireReadAny(p);
      return this.#requireOwner(p, owner, c.types[c.ownerParam] as ParamType, values[c.ownerParam] as ParamValue);
    };
    return andThen(principal, check);
  }

  /** Scopes a route needs as the OpenAPI document lists them. */
  scopesOf(r: CompiledResource, collection: boolean): string[] {
    if (collection && r.owner !== null && r.collection?.ownerParam === -1) return [r.scope, this.#readAny];
    return [r.scope];
  }

  #requireReadAny(principal: Principal): Principal {
    if (!principal.scopes.has(this.#readAny)) throw insufficientScope(this.#readAny);
    return principal;
  }

  #requireOwner(principal: Principal, owner: NonNullable<CompiledResource['owner']>, type: ParamType, value: ParamValue): Principal {
    if (principal.scopes.has(this.#readAny)) return principal;
    // The claim may be a JSON number or a string of the canonical spelling; nothing else matches.
    if (paramFromValue(type, principal.claims[owner.claim]) === value) return principal;
    throw notOwner(this.#readAny, owner.noun);
  }
}

/** Key-set fetches so far, whatever their result. */
function fetchCount(jwks: JwksTally): number {
  let n = 0;
  for (const key in jwks) n += jwks[key as keyof JwksTally];
  return n;
}
