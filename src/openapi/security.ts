import type { RouteDoc } from '../protocol/route-doc.ts';

export const SECURITY_SCHEME = 'bearerAuth';
/** The security scheme of API keys (auth.apiKeys), listed only while they are accepted. */
export const API_KEY_SCHEME = 'apiKeyAuth';

/** What the security schemes say: the scopes named in the bearer one, and which other credentials are accepted. */
export interface SecurityInfo {
  readonly requiredScope: string;
  readonly readAnyScope: string;
  /** auth.introspection.url is set: the bearer may be an opaque token. */
  readonly introspection?: boolean;
  /** API keys are accepted (auth.apiKeys): `header` carries them, or null for `Authorization: ApiKey <key>`; absent: none. */
  readonly apiKeys?: { readonly header: string | null };
}

/**
 * The operation's security requirements: its scopes under bearer (and, with API keys, the same
 * scopes under the API key as an alternative), and for a public read also an empty requirement,
 * which says it may be called without credentials (OpenAPI 3.1 section 4.8.10).
 */
export function securityOf(doc: RouteDoc, apiKeys: boolean): Record<string, string[]>[] {
  if (doc.scopes.length === 0) return [];
  const schemes: Record<string, string[]>[] = [{ [SECURITY_SCHEME]: [...doc.scopes] }];
  if (apiKeys) schemes.push({ [API_KEY_SCHEME]: [...doc.scopes] });
  return doc.public === true ? [{}, ...schemes] : schemes;
}

/** components.securitySchemes: the bearer token, and the API key while keys are accepted. */
export function securitySchemes(info: SecurityInfo): Record<string, unknown> {
  const bearer = {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      `${info.introspection === true ? 'A JWT, or an opaque token the identity provider introspects,' : 'A JWT'} in Authorization: Bearer. Scopes (scope or scp claim): each route lists its own ("${info.requiredScope}" by default); ` +
      `"${info.readAnyScope}" lifts a resource's owner rule, and is then needed for a collection whose path lacks the owner parameter.`,
  };
  if (info.apiKeys === undefined) return { [SECURITY_SCHEME]: bearer };
  const apiKey = {
    type: 'apiKey',
    in: 'header',
    name: info.apiKeys.header ?? 'Authorization',
    description:
      `An API key${info.apiKeys.header === null ? ' as Authorization: ApiKey <key>' : ''}, in place of a token: its consumer's scopes and claims are read as a token's. ` +
      'Never in a query parameter.',
  };
  return { [SECURITY_SCHEME]: bearer, [API_KEY_SCHEME]: apiKey };
}
