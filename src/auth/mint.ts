import { SignJWT } from 'jose';
import type { DevKeyPair } from './dev-keys.ts';

export interface MintOptions {
  readonly sub: string;
  readonly scope: string;
  readonly ttlSeconds: number;
  readonly issuer?: string | null;
  readonly audience?: string | null;
  readonly nowMs?: number;
}

/** Signs a dev token with the dev key (ES256). */
export async function mintDevToken(keys: DevKeyPair, options: MintOptions): Promise<string> {
  const iat = Math.floor((options.nowMs ?? Date.now()) / 1000);
  const jwt = new SignJWT({ scope: options.scope })
    .setProtectedHeader({ alg: 'ES256', kid: keys.kid, typ: 'JWT' })
    .setSubject(options.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + options.ttlSeconds);
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  return jwt.sign(keys.privateKey);
}
