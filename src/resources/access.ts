import type { IncomingMessage } from 'node:http';
import { authorize, authorizeLimited } from '../auth/authenticate.ts';
import { insufficientScope, notOwner } from '../auth/challenge.ts';
import type { Principal } from '../auth/verifier.ts';
import type { GatewayContext } from '../context.ts';
import type { ClientAddressOf } from '../http/client-address.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { parseCustomerId } from './customer-id.ts';

/**
 * Who may read what. Every route needs auth.requiredScope. With auth.ownerClaim set, a token
 * reads only the customer (and its orders) named by that claim unless it has auth.readAnyScope,
 * and the collection needs auth.readAnyScope. All of it is decided before the cache or the
 * upstream is asked, so a refusal says nothing about other customers, not even that they exist.
 */
export class Access {
  readonly #ctx: GatewayContext;
  readonly #ownerClaim: string | null;
  readonly #readAny: string;
  /** null when rate limiting is off: then nothing of it runs. */
  readonly #limiter: RateLimiter | null;
  /** Whose bucket a request without a valid token takes from (server.trustProxy). */
  readonly #clientAddress: ClientAddressOf;

  constructor(ctx: GatewayContext, limiter: RateLimiter | null, clientAddress: ClientAddressOf) {
    this.#ctx = ctx;
    this.#limiter = limiter;
    this.#clientAddress = clientAddress;
    this.#ownerClaim = ctx.config.auth.ownerClaim;
    this.#readAny = ctx.config.auth.readAnyScope;
  }

  get ownershipOn(): boolean {
    return this.#ownerClaim !== null;
  }

  /** Rate limiting is on: authorized routes may answer 429 (the OpenAPI document lists it). */
  get rateLimited(): boolean {
    return this.#limiter !== null;
  }

  /** The route's base scope only (API root, OpenAPI document). */
  any(req: IncomingMessage): Principal | Promise<Principal> {
    const { verifier, config } = this.#ctx;
    if (this.#limiter === null) return authorize(req, verifier, config.auth, config.auth.requiredScope);
    return authorizeLimited(req, verifier, config.auth, config.auth.requiredScope, this.#limiter, this.#clientAddress);
  }

  /** Scope plus ownership of customer `id`: the principal, at once when its token is cached. */
  customer(req: IncomingMessage, id: number): Principal | Promise<Principal> {
    const principal = this.any(req);
    if (this.#ownerClaim === null) return principal;
    if (principal instanceof Promise) return principal.then((p) => this.#requireOwner(p, id));
    return this.#requireOwner(principal, id);
  }

  /** Scope, plus auth.readAnyScope when ownership is on: a page shows many customers. */
  collection(req: IncomingMessage): Principal | Promise<Principal> {
    const principal = this.any(req);
    if (this.#ownerClaim === null) return principal;
    if (principal instanceof Promise) return principal.then((p) => this.#requireReadAny(p));
    return this.#requireReadAny(principal);
  }

  #requireReadAny(principal: Principal): Principal {
    if (!principal.scopes.has(this.#readAny)) throw insufficientScope(this.#readAny);
    return principal;
  }

  #requireOwner(principal: Principal, id: number): Principal {
    if (principal.scopes.has(this.#readAny)) return principal;
    const claim = principal.owner;
    // The claim may be a JSON number or a string of the canonical digits; nothing else matches.
    if (claim === id || (typeof claim === 'string' && parseCustomerId(claim) === id)) return principal;
    throw notOwner(this.#readAny);
  }
}
