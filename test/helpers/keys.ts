import { createServer, type Server, type ServerResponse } from 'node:http';
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
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header }).sign(key.privateKey);
}

/** How a test JWKS server misbehaves instead of serving its keys. */
export type JwksFault =
  /** Answers this status with a small body. */
  | { readonly kind: 'status'; readonly status: number }
  /** Answers 200 with this body and content type (HTML, JSON that is not a key set, ...). */
  | { readonly kind: 'body'; readonly contentType: string; readonly body: string }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Answers 200 and streams an endless key list, as fast as the reader takes it. */
  | { readonly kind: 'endless' }
  /** Declares a Content-Length of this many bytes (and sends them, if read). */
  | { readonly kind: 'declared'; readonly bytes: number };

/** A real JWKS endpoint on 127.0.0.1:0 that counts its fetches; its key set, or its fault, can be changed. */
export interface JwksServer {
  readonly url: string;
  readonly fetches: () => number;
  setKeys(keys: readonly JWK[]): void;
  /** Misbehave from the next request on; null serves the keys again. */
  setFault(fault: JwksFault | null): void;
  /** Bytes written by endless answers, and how many of those the reader cut short by closing. */
  readonly endless: { written: number; cut: number };
  /** Holds every answer from now on until `release()` (to let requests pile up behind one fetch). */
  hold(): { release(): void };
  close(): Promise<void>;
}

const FAKE_KEY = JSON.stringify({
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRjGkmCeqGCRJfSnzrxhuHAuT9PtYRp1pX0Y2Eo',
  kid: 'padding',
});

export async function startJwksServer(keys: readonly JWK[]): Promise<JwksServer> {
  let current = keys;
  let fetches = 0;
  let fault: JwksFault | null = null;
  let held: Promise<void> | null = null;
  const endless = { written: 0, cut: 0 };
  const serve = (res: ServerResponse): void => {
    switch (fault?.kind) {
      case 'status':
        res.writeHead(fault.status, { 'content-type': 'text/plain' });
        res.end('key server trouble');
        return;
      case 'body':
        res.writeHead(200, { 'content-type': fault.contentType, 'content-length': Buffer.byteLength(fault.body) });
        res.end(fault.body);
        return;
      case 'hang':
        return;
      case 'declared':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': fault.bytes });
        res.end(' '.repeat(fault.bytes));
        return;
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[');
        const chunk = `${Array.from({ length: 200 }, () => FAKE_KEY).join(',')},`;
        let ended = false;
        res.on('close', () => {
          if (!ended) endless.cut++;
          ended = true;
        });
        // Bounded: stops after 256 MB even if nobody cuts it.
        const pump = (): void => {
          while (!ended && endless.written < 256 * 1024 * 1024) {
            endless.written += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          if (!ended) {
            ended = true;
            res.end(`${FAKE_KEY}]}`);
          }
        };
        pump();
        return;
      }
      default: {
        const body = JSON.stringify({ keys: current });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }
    }
  };
  const server: Server = createServer((_req, res) => {
    fetches++;
    if (held === null) serve(res);
    else void held.then(() => serve(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    fetches: () => fetches,
    setKeys: (next) => {
      current = next;
    },
    setFault: (next) => {
      fault = next;
    },
    endless,
    hold: () => {
      let release = (): void => {};
      held = new Promise<void>((resolve) => {
        release = () => {
          held = null;
          resolve();
        };
      });
      return { release };
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
