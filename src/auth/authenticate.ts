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
 * authorize() under the rate limit. A request with a valid token counts against its subject
 * (`sub`); one without (no token, a rejected one, or a token with no `sub`) against the client
 * address, so failed attempts are limited too. Over the limit the answer is 429 instead of
 * what it would have been. A key-source outage (503) is ours, not the client's: not counted.
 * The client address is the one the access log shows (server.trustProxy, client-address.ts).
 */
export function authorizeLimited(req: IncomingMessage, verifier: TokenVerifier, auth: AuthConfig, scope: string, limiter: RateLimiter, clientAddress: ClientAddressOf): Principal | Promise<Principal> {
  let principal: Principal | Promise<Principal>;
  try {
    principal = authorize(req, verifier, auth, scope);
  } catch (err) {
    throw charged(req, limiter, clientAddress, err);
  }
  if (principal instanceof Promise) {
    return principal.then(
      (p) => admitted(req, limiter, clientAddress, p.subject, p),
      (err: unknown) => {
        throw charged(req, limiter, clientAddress, err);
      },
    );
  }
  return admitted(req, limiter, clientAddress, principal.subject, principal);
}

/** Takes one request from the subject's bucket, or the client address's when there is no subject: the 429, or null. */
function take(req: IncomingMessage, limiter: RateLimiter, clientAddress: ClientAddressOf, subject: string | undefined): HgError | null {
  return limiter.take(subject, subject === undefined ? clientAddress(req) : undefined);
}

function admitted(req: IncomingMessage, limiter: RateLimiter, clientAddress: ClientAddressOf, subject: string | undefined, principal: Principal): Principal {
  const over = take(req, limiter, clientAddress, subject);
  if (over !== null) throw over;
  return principal;
}

/** The error to answer a refused request with: its own, or 429 once its client is over the limit. */
function charged(req: IncomingMessage, limiter: RateLimiter, clientAddress: ClientAddressOf, err: unknown): unknown {
  if (!(err instanceof HgError) || err.status >= 500) return err;
  // A valid token that lacks the scope has named its subject already (requireScope).
  return take(req, limiter, clientAddress, req instanceof HgRequest ? req.subject : undefined) ?? err;
}
