import type { IncomingMessage } from 'node:http';
import type { AuthConfig } from '../config/types.ts';
import { HgError } from '../errors.ts';
import type { ClientAddressOf } from '../http/client-address.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { HgRequest } from '../http/response.ts';
import { readBearerToken } from './bearer.ts';
import { insufficientScope } from './challenge.ts';
import type { Principal, TokenVerifier } from './verifier.ts';

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

/**
 * authorize() under the rate limit. A verification costs crypto (~100-200 µs), so a token that is
 * not in the verified-token cache is paid for by the client address before it is verified: a
 * client over its limit with forged tokens gets 429 and costs no crypto. A valid token then counts
 * against its subject (`sub`), whatever token of that subject it is; a cached token costs no
 * crypto and counts against its subject only. Requests refused before a token (none, malformed)
 * count against the address. Over the limit the answer is 429 instead of what it would have been.
 * A key-source outage (503) is ours, not the client's: what it took is given back.
 * The client address is the one the access log shows (server.trustProxy, client-address.ts).
 */
export function authorizeLimited(req: IncomingMessage, verifier: TokenVerifier, auth: AuthConfig, scope: string, limiter: RateLimiter, clientAddress: ClientAddressOf): Principal | Promise<Principal> {
  // The one place the client's address is read: the one the access log shows (server.trustProxy).
  const address = clientAddress(req);
  let token: string;
  try {
    token = readBearerToken(req, auth.maxTokenBytes);
  } catch (err) {
    throw charged(req, limiter, address, err);
  }
  const cached = verifier.cached(token);
  if (cached !== undefined) return settle(req, limiter, address, cached, scope, false);
  const over = limiter.take(undefined, address);
  if (over !== null) throw over;
  return verifier.verify(token).then(
    (principal) => settle(req, limiter, address, principal, scope, true),
    (err: unknown) => {
      if (err instanceof HgError && err.status >= 500) limiter.giveBack(address);
      throw err;
    },
  );
}

/**
 * A verified principal: its scope checked, its subject charged. A token without a subject counts
 * against its address, which has paid already when the token was just verified (`addressPaid`).
 */
function settle(req: IncomingMessage, limiter: RateLimiter, address: string | undefined, principal: Principal, scope: string, addressPaid: boolean): Principal {
  const paid = addressPaid && principal.subject === undefined;
  try {
    requireScope(req, principal, scope);
  } catch (err) {
    throw paid ? err : charged(req, limiter, address, err);
  }
  if (paid) return principal;
  const over = limiter.take(principal.subject, address);
  if (over !== null) throw over;
  return principal;
}

/** The error to answer a refused request with: its own, or 429 once its client is over the limit. */
function charged(req: IncomingMessage, limiter: RateLimiter, address: string | undefined, err: unknown): unknown {
  if (!(err instanceof HgError) || err.status >= 500) return err;
  // A valid token that lacks the scope has named its subject already (requireScope).
  const subject = req instanceof HgRequest ? req.subject : undefined;
  return limiter.take(subject, address) ?? err;
}
