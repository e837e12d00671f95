import type { IncomingMessage } from 'node:http';
import type { AuthConfig } from '../config/types.ts';
import { HgError } from '../errors.ts';
import type { Limiter } from '../http/rate-limit.ts';
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
 * A cluster-wide limiter may decide later (a promise); this process's buckets decide at once.
 */
export function authorizeLimited(req: IncomingMessage, verifier: TokenVerifier, auth: AuthConfig, scope: string, limiter: Limiter): Principal | Promise<Principal> {
  let principal: Principal | Promise<Principal>;
  try {
    principal = authorize(req, verifier, auth, scope);
  } catch (err) {
    return charged(req, limiter, err);
  }
  if (principal instanceof Promise) {
    return principal.then(
      (p) => admitted(req, limiter, p),
      (err: unknown) => charged(req, limiter, err),
    );
  }
  return admitted(req, limiter, principal);
}

function admitted(req: IncomingMessage, limiter: Limiter, principal: Principal): Principal | Promise<Principal> {
  const over = limiter.take(principal.subject, req.socket.remoteAddress);
  if (over === null) return principal;
  if (over instanceof Promise) {
    return over.then((decided) => {
      if (decided !== null) throw decided;
      return principal;
    });
  }
  throw over;
}

/** Throws (or rejects with) the error to answer a refused request with: its own, or 429 once its client is over the limit. */
function charged(req: IncomingMessage, limiter: Limiter, err: unknown): never | Promise<never> {
  if (!(err instanceof HgError) || err.status >= 500) throw err;
  // A valid token that lacks the scope has named its subject already (requireScope).
  const subject = req instanceof HgRequest ? req.subject : undefined;
  const over = limiter.take(subject, req.socket.remoteAddress);
  if (over instanceof Promise) {
    return over.then((decided) => {
      throw decided ?? err;
    });
  }
  throw over ?? err;
}
