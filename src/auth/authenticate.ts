import type { IncomingMessage } from 'node:http';
import type { AuthConfig } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import type { ClientAddressOf } from '../http/client-address.ts';
import type { Limiter } from '../http/rate-limit.ts';
import { HgRequest } from '../protocol/response.ts';
import { readBearerToken } from './bearer.ts';
import { insufficientScope } from './challenge.ts';
import type { Principal } from './principal.ts';
import type { TokenVerifier } from './verifier.ts';

/**
 * Authenticates and authorizes one request. Returns the principal at once when the token is in
 * the verified-token cache, else a promise; either way the scope is checked.
 */
export function authorize(req: IncomingMessage, verifier: TokenVerifier, auth: AuthConfig, scope: string): Principal | Promise<Principal> {
  const token = readBearerToken(req, auth.maxTokenBytes);
  const cached = verifier.cached(token);
  if (cached !== undefined) return requireScope(req, cached, scope);
  return verifier.verify(token).then((principal) => requireScope(req, principal, scope));
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
 * authorize() under the rate limit. A verification costs crypto (~100-200 µs), so a token that is
 * not in the verified-token cache is paid for by the client address before it is verified: a
 * client over its limit with forged tokens gets 429 and costs no crypto. A valid token then counts
 * against its subject (`sub`), whatever token of that subject it is; a cached token costs no
 * crypto and counts against its subject only. Requests refused before a token (none, malformed)
 * count against the address. Over the limit the answer is 429 instead of what it would have been.
 * A key-source outage (503) is ours, not the client's: what it took is given back. The client
 * address is the one the access log shows (server.trustProxy, client-address.ts). A cluster-wide
 * limiter may decide later (a promise); this process's buckets decide at once.
 */
export function authorizeLimited(req: IncomingMessage, verifier: TokenVerifier, auth: AuthConfig, scope: string, limiter: Limiter, clientAddress: ClientAddressOf): Principal | Promise<Principal> {
  // The one place the client's address is read.
  const address = clientAddress(req);
  let token: string;
  try {
    token = readBearerToken(req, auth.maxTokenBytes);
  } catch (err) {
    return charged(req, limiter, address, err);
  }
  const cached = verifier.cached(token);
  if (cached !== undefined) return settle(req, limiter, address, cached, scope);
  return decided(limiter.take(undefined, address), () =>
    verifier.verify(token).then(
      // The address has paid for the verification: a token without a subject is charged nothing more.
      (principal) => (principal.subject === undefined ? requireScope(req, principal, scope) : settle(req, limiter, address, principal, scope)),
      (err: unknown) => {
        if (err instanceof HgError && err.status >= 500) limiter.giveBack(address);
        throw err;
      },
    ),
  );
}

/**
 * A principal from the cache, or just verified with a subject: its scope checked, its subject
 * charged. A token without a subject counts against its address (which a verification has paid
 * already: authorizeLimited does not come here then).
 */
function settle(req: IncomingMessage, limiter: Limiter, address: string | undefined, principal: Principal, scope: string): Principal | Promise<Principal> {
  try {
    requireScope(req, principal, scope);
  } catch (err) {
    return charged(req, limiter, address, err);
  }
  return decided(limiter.take(principal.subject, address), () => principal);
}

/** Throws (or rejects with) the error to answer a refused request with: its own, or 429 once its client is over the limit. */
function charged(req: IncomingMessage, limiter: Limiter, address: string | undefined, err: unknown): never | Promise<never> {
  if (!(err instanceof HgError) || err.status >= 500) throw err;
  // A valid token that lacks the scope has named its subject already (requireScope).
  const subject = req instanceof HgRequest ? req.subject : undefined;
  const over = limiter.take(subject, address);
  if (over instanceof Promise) {
    return over.then((result) => {
      throw result ?? err;
    });
  }
  throw over ?? err;
}
