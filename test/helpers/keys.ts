import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A real signing key with its public JWK, as an identity provider would hold it. */
export interface TestKey {
  readonly kid: string;
  readonly alg: 'ES256' | 'RS256' | 'EdDSA';
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
  publicPem(): Promise<string>;
}

let counter = 0;

export async function makeKey(alg: TestKey['alg'] = 'ES256', kid = `test-key-${++counter}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, publicJwk, publicPem: () => exportSPKI(publicKey) };
}

export interface TokenOptions {
  readonly claims?: JWTPayload;
  readonly header?: Record<string, unknown>;
  /** Seconds from now; negative for an expired token. Default 3600. */
  readonly expiresIn?: number;
  readonly nowSeconds?: number;
  readonly omitExp?: boolean;
}

/** Signs a real JWT. Defaults: scope customers:read, sub "user-1", one hour of life. */
export async function signToken(key: TestKey, options: TokenOptions = {}): Promise<string> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const claims: JWTPayload = { sub: 'user-1', scope: 'customers:read', iat: now, ...options.claims };
  if (!options.omitExp && claims.exp === undefined) claims.exp = now + (options.expiresIn ?? 3600);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header })
    .sign(key.privateKey);
}

/** A real JWKS endpoint on 127.0.0.1:0 that counts its fetches; its key set can be changed. */
export interface JwksServer {
  readonly url: string;
  readonly fetches: () => number;
  setKeys(keys: readonly JWK[]): void;
  close(): Promise<void>;
}

export async function startJwksServer(keys: readonly JWK[]): Promise<JwksServer> {
  let current = keys;
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    fetches++;
    const body = JSON.stringify({ keys: current });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    fetches: () => fetches,
    setKeys: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Signs any header and payload with an ES256 key, bypassing jose's own checks, for tokens jose
 * would refuse to produce (unknown `crit`, odd claim types). The signature is real.
 */
export async function signRawEs256(key: TestKey, header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string> {
  const enc = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${enc({ alg: 'ES256', kid: key.kid, ...header })}.${enc(payload)}`;
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.privateKey, new TextEncoder().encode(input));
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}
