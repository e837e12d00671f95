import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { AuthConfig } from '../config/types.ts';

/**
 * Whose subjects a gateway's tokens name: the key source it trusts and the issuer it requires.
 * Two gateways sharing a redis.keyPrefix with different key sources (tenants, say) each have a
 * `sub: "alice"`, and those are two people: idempotency records and rate buckets kept in Redis are
 * named by realm and subject, never by subject alone. A digest, so neither a key file's path nor a
 * secret appears in a Redis key.
 */
export function credentialRealm(auth: AuthConfig): string {
  const source =
    auth.jwksUrl !== null
      ? ['jwks-url', auth.jwksUrl]
      : auth.jwksFile !== null
        ? ['jwks-file', auth.jwksFile]
        : auth.publicKeyFile !== null
          ? ['public-key-file', auth.publicKeyFile]
          : auth.secret !== null
            ? ['secret', auth.secret]
            : ['dev-keys', auth.devKeyDir];
  return createHash('sha256')
    .update(JSON.stringify(['hypergate realm', auth.issuer, ...source]))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * The issuer a verified token names (its `iss`), for a gateway that requires none: one key source
 * may sign for several issuers (a multi-tenant identity provider), and their subjects are apart.
 * Read from the token once it was verified; undefined when it names none.
 */
export function tokenIssuer(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  try {
    const iss = decodeJwt(authorization.slice(authorization.indexOf(' ') + 1).trim()).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}
