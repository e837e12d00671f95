import type { IncomingMessage } from 'node:http';
import type { AuthConfig } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import type { ClientAddressOf } from '../protocol/client-address.ts';
import type { Limiter } from './rate-limit.ts';
import { HgRequest } from '../protocol/response.ts';
import { readBearerToken } from './bearer.ts';
import { insufficientScope } from './challenge.ts';
import { ANONYMOUS, type Principal } from './principal.ts';
import type { ApiKeyAuthenticator } from './api-keys/authenticator.ts';
import type { TokenVerifier } from './verifier.ts';

/** What authorizing a request needs: made once per Access, never per request. */
export interface AuthGate {
  readonly verifier: TokenVerifier;
  readonly auth: AuthConfig;
  /** API keys (auth.apiKeys), a second scheme beside Bearer; absent or null: none accepted. */
  readonly apiKeys?: ApiKeyAuthenticator | null;
}

/** An AuthGate under the rate limit: the limiter, and whose bucket a request without a valid token takes from (server.trustProxy). */
export interface LimitedGate extends AuthGate {
  readonly limiter: Limiter;
  readonly clientAddress: ClientAddressOf;
}

/**
 * Authenticates and authorizes one request. Returns the principal at once when the token is in
 * the verified-token cache, else a promise; either way the scope is checked.
 */
export function authorize(req: IncomingMessage, gate: AuthGate, scope: string): Principal | Promise<Principal> {
  const keys = gate.apiKeys;
  if (keys != null) return authorizeBesideKeys(req, gate, keys, scope);
  const token = readBearerToken(req, gate.auth.maxTokenBytes);
  const cached = gate.verifier.cached(token);
  if (cached !== undefined) return requireScope(req, cached, scope);
  return gate.verifier.verify(token).then((principal) => requireScope(req, principal, scope));
}

/**
 * authorize() where API keys are accepted too (auth.apiKeys): a request that carries a key is
 * authenticated by it (ApiKeyAuthenticator.read decides, by the Authorization scheme or the
 * operator's header, before any exception is made), any other goes the Bearer way, and its 401s
 * name both schemes.
 */
function authorizeBesideKeys(req: IncomingMessage, gate: AuthGate, keys: ApiKeyAuthenticator, scope: string): Principal | Promise<Principal> {
  const key = keys.read(req);
  if (key !== null) {
    const principal = keys.authenticate(key);
    if (principal instanceof Promise) return principal.then((p) => requireScope(req, p, scope));
    return requireScope(req, principal, scope);
  }
  let token: string;
  try {
    token = readBearerToken(req, gate.auth.maxTokenBytes);
  } catch (err) {
    throw keys.challenged(err);
  }
  const cached = gate.verifier.cached(token);
  if (cached !== undefined) return requireScope(req, cached, scope);
  return gate.verifier.verify(token).then(
    (principal) => requireScope(req, principal, scope),
    (err: unknown) => {
      throw keys.challenged(err);
    },
  );
}

function requireScope(req: IncomingMessage, principal: Principal, scope: string): Principal {
  // The access log names the subject (never the token).
  if (req instanceof HgRequest) req.subject = principal.subject;
  if (!principal.scopes.has(scope)) throw insufficientScope(scope);
  return principal;
}

/** A limiter's decision, at once or (a cluster-wide limit asking Redis) later: the principal, or the 429. */
function decided(over: HgError | null | Promise<HgError | null>, then: () => Principal | Promise<Principal>): Principal | Promise<Principal> {
  if (over === null) return then();
  if (over instanceof Promise) {
    return over.then((result) => {
      if (result !== null) throw result;
      return then();
    });
  }
  throw over;
}

/**
 * authorize() under the rate limit. A valid token counts against its subject (`sub`), whatever
 * token of that subject it is, and never costs its client address anything: behind one NAT or
 * backend-for-frontend, many users each pay their own. The address pays only for requests that
 * fail authentication (none, malformed, a token that does not verify) and for valid tokens without
 * a subject (nothing else names them). A verification costs crypto (~100-200 µs), so while the
 * address is over that budget its tokens not yet verified get 429 before any crypto; a cached token
 * costs none and is never held back by its address. Over the limit the answer is 429 instead of what
 * it would have been. A key-source outage (503) is ours, not the client's: it is charged nothing.
 * The client address is the one the access log shows (server.trustProxy, protocol/client-address.ts). A
 * cluster-wide limiter may decide later (a promise); this process's buckets decide at once.
 */
export function authorizeLimited(req: IncomingMessage, gate: LimitedGate, scope: string): Principal | Promise<Principal> {
  const limiter = gate.limiter;
  const keys = gate.apiKeys;
  if (keys != null && keys.carries(req)) return keyLimited(req, gate, keys, scope);
  let token: string;
  try {
    token = readBearerToken(req, gate.auth.maxTokenBytes);
  } catch (err) {
    return failed(limiter, gate.clientAddress(req), keys == null ? err : keys.challenged(err));
  }
  const cached = gate.verifier.cached(token);
  // A cached token with a subject is charged to its subject alone: its address (behind
  // server.trustProxy, a walk over X-Forwarded-For) is not read on that hit at all.
  if (cached !== undefined) return settle(req, limiter, cached.subject === undefined ? gate.clientAddress(req) : undefined, cached, scope);
  const address = gate.clientAddress(req);
  const refused = limiter.refusing(address);
  if (refused !== null) throw refused;
  return gate.verifier.verify(token).then(
    (principal) => settle(req, limiter, address, principal, scope),
    (err: unknown) => verifyFailed(limiter, address, keys == null ? err : keys.challenged(err)),
  );
}

/**
 * An API key under the rate limit, as a token is: a malformed or unknown key (and a malformed
 * header) is charged to the address; a key the store must be asked about is not looked up while
 * the address is over its budget; a valid key is charged to its subject (the consumer).
 */
function keyLimited(req: IncomingMessage, gate: LimitedGate, keys: ApiKeyAuthenticator, scope: string): Principal | Promise<Principal> {
  const limiter = gate.limiter;
  let principal: Principal | Promise<Principal>;
  try {
    principal = keys.authenticate(keys.read(req) ?? '');
  } catch (err) {
    return failed(limiter, gate.clientAddress(req), err);
  }
  if (!(principal instanceof Promise)) return settle(req, limiter, undefined, principal, scope);
  const address = gate.clientAddress(req);
  const refused = limiter.refusing(address);
  if (refused !== null) throw refused;
  return principal.then(
    (p) => settle(req, limiter, address, p, scope),
    (err: unknown) => verifyFailed(limiter, address, err),
  );
}

/**
 * A principal from the cache, or just verified: its scope checked, its subject charged (its
 * address when it has none). A token that lacks the scope counts the same way (403, then 429).
 */
function settle(req: IncomingMessage, limiter: Limiter, address: string | undefined, principal: Principal, scope: string): Principal | Promise<Principal> {
  try {
    requireScope(req, principal, scope);
  } catch (err) {
    return decided(limiter.take(principal.subject, address, principal, req), () => {
      throw err;
    });
  }
  return decided(limiter.take(principal.subject, address, principal, req), () => principal);
}

/** A request refused before any token was verified (none, malformed): 429 while its address is over its budget, else charged to it. */
function failed(limiter: Limiter, address: string | undefined, err: unknown): never | Promise<never> {
  if (!(err instanceof HgError) || err.status >= 500) throw err;
  const refused = limiter.refusing(address);
  if (refused !== null) throw refused;
  return rethrowAfter(limiter.charge(address), err);
}

/** A token that did not verify: charged to its address (the crypto was spent), and answered with its own error. */
function verifyFailed(limiter: Limiter, address: string | undefined, err: unknown): never | Promise<never> {
  if (!(err instanceof HgError) || err.status >= 500) throw err;
  return rethrowAfter(limiter.charge(address), err);
}

function rethrowAfter(charged: void | Promise<void>, err: unknown): never | Promise<never> {
  if (charged instanceof Promise) {
    return charged.then(() => {
      throw err;
    });
  }
  throw err;
}

/** An insufficient scope becomes the anonymous principal; any other failure stands. */
function anonymousIfUnscoped(err: unknown): Principal {
  if (err instanceof HgError && err.code === 'HG_ERR_AUTH_INSUFFICIENT_SCOPE') return ANONYMOUS;
  throw err;
}

/**
 * The one rule for reads anyone may make (a public resource's or pass-through route's GET and
 * HEAD). Without an Authorization header the caller is ANONYMOUS, charged to its address's bucket
 * when rate limiting is on (`limited`). A request that carries credentials has them checked as on
 * every other route, so a client that meant to authenticate learns it failed (a bad token is a
 * 401). A valid token without `scope` is served as ANONYMOUS: it would be answered what anyone is
 * answered, and nothing of it (subject, claims, the token) reaches the upstream or the cache.
 */
export function authorizePublicRead(req: IncomingMessage, gate: AuthGate, limited: LimitedGate | null, scope: string): Principal | Promise<Principal> {
  if (req.headers.authorization === undefined && gate.apiKeys?.carries(req) !== true) {
    if (limited === null) return ANONYMOUS;
    return decided(limited.limiter.take(undefined, limited.clientAddress(req), undefined, req), () => ANONYMOUS);
  }
  let principal: Principal | Promise<Principal>;
  try {
    principal = limited === null ? authorize(req, gate, scope) : authorizeLimited(req, limited, scope);
  } catch (err) {
    return anonymousIfUnscoped(err);
  }
  return principal instanceof Promise ? principal.catch(anonymousIfUnscoped) : principal;
}
