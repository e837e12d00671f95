import type { IncomingMessage } from 'node:http';
import type { AuthConfig } from '../config/types.ts';
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
