import type { IncomingMessage } from 'node:http';
import { authorize, authorizeLimited } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import type { AuthConfig } from '../config/types.ts';
import type { ClientAddressOf } from '../protocol/client-address.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import { HgError } from '../lib/errors.ts';
import type { CompiledRoute } from './compile.ts';

/** What route access needs: the same verifier, limiter and client-address rule as every other route. */
export interface RouteAccessParts {
  readonly verifier: TokenVerifier;
  readonly auth: AuthConfig;
  readonly limiter: Limiter | null;
  readonly clientAddress: ClientAddressOf;
}

/**
 * Who may use a pass-through route: a token with the route's scope, checked as on every other
 * route (the same verifier, token cache, challenges and rate limits). A public route lets GET and
 * HEAD through without credentials, charged to the client's address; one that carries an
 * Authorization header has its token verified all the same (an invalid one is a 401), and a valid
 * one without the route's scope is served as if it had come without (nothing of it goes upstream).
 * Resolves to the principal, or null for a request served without one.
 */
export async function routeAccess(req: IncomingMessage, route: CompiledRoute, parts: RouteAccessParts): Promise<Principal | null> {
  const { verifier, auth, limiter, clientAddress } = parts;
  const publicRead = route.public && (req.method === 'GET' || req.method === 'HEAD');
  if (publicRead && req.headers.authorization === undefined) {
    const over = limiter === null ? null : await limiter.take(undefined, clientAddress(req));
    if (over !== null) throw over;
    return null;
  }
  try {
    return await (limiter === null ? authorize(req, { verifier, auth }, route.scope) : authorizeLimited(req, { verifier, auth, limiter, clientAddress }, route.scope));
  } catch (err) {
    if (publicRead && err instanceof HgError && err.code === 'HG_ERR_AUTH_INSUFFICIENT_SCOPE') return null;
    throw err;
  }
}
