import type { IncomingMessage } from 'node:http';
import { authorize, authorizeLimited, authorizePublicRead } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import type { ApiKeyAuthenticator } from '../auth/api-keys/authenticator.ts';
import type { AuthConfig } from '../config/types.ts';
import type { ClientAddressOf } from '../protocol/client-address.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import type { CompiledRoute } from './compile.ts';

/** What route access needs: the same verifier, limiter and client-address rule as every other route. */
export interface RouteAccessParts {
  readonly verifier: TokenVerifier;
  readonly auth: AuthConfig;
  readonly limiter: Limiter | null;
  readonly clientAddress: ClientAddressOf;
  /** API keys (auth.apiKeys), accepted as on every other route; absent or null: none. */
  readonly apiKeys?: ApiKeyAuthenticator | null;
}

/**
 * Who may use a pass-through route: a token with the route's scope, checked as on every other
 * route (the same verifier, token cache, challenges and rate limits). A public route's GET and
 * HEAD follow the rule every public read follows (authorizePublicRead): without credentials, or
 * with a valid token lacking the route's scope, the caller is ANONYMOUS and nothing of a token
 * goes upstream. Resolves to the principal.
 */
export async function routeAccess(req: IncomingMessage, route: CompiledRoute, parts: RouteAccessParts): Promise<Principal> {
  const { verifier, auth, limiter, clientAddress, apiKeys } = parts;
  if (route.public && (req.method === 'GET' || req.method === 'HEAD')) {
    return await authorizePublicRead(
      req,
      { verifier, auth, apiKeys },
      limiter === null ? null : { verifier, auth, apiKeys, limiter, clientAddress },
      route.scope,
    );
  }
  return await (limiter === null
    ? authorize(req, { verifier, auth, apiKeys }, route.scope)
    : authorizeLimited(req, { verifier, auth, apiKeys, limiter, clientAddress }, route.scope));
}
