import { createPublicKey, verify, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importSPKI, jwtVerify, SignJWT } from 'jose';
import { AUDIENCE, ISSUER, makeKeys, mint } from '../lib/jwt.ts';
import { measureAsync, measure, type Comparison, type Timing } from './timing.ts';

const OPTIONS = { algorithms: ['ES256'], issuer: ISSUER, audience: AUDIENCE, requiredClaims: ['exp'] };

/**
 * jose's raw ES256 verification rate, one token at a time, each token different (as in the
 * fresh-tokens scenario): the ceiling for a gateway that must verify every request.
 */
export async function joseEs256Rate(tokens: readonly string[], publicPem: string, ms: number): Promise<Timing> {
  const key = await importSPKI(publicPem, 'ES256');
  return measureAsync('jose jwtVerify ES256 (imported key)', (i) => jwtVerify(tokens[i % tokens.length] as string, key, OPTIONS), ms);
}

/** ES256 and HS256 with jose, each against its simplest alternative. */
export async function joseVerify(ms: number): Promise<Comparison[]> {
  const dir = mkdtempSync(join(tmpdir(), 'hg-micro-'));
  try {
    const keys = makeKeys(dir);
    const tokens = Array.from({ length: 2000 }, (_, i) => mint(keys, `user-${i}`));
    const pem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const publicKey = createPublicKey(pem);
    const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const es = await joseEs256Rate(tokens, publicPem, ms);
    const raw = measure(
      'node:crypto verify only (no JWT parsing, no claims)',
      (i) => {
        const t = tokens[i % tokens.length] as string;
        const dot = t.lastIndexOf('.');
        return verify('sha256', Buffer.from(t.slice(0, dot)), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(t.slice(dot + 1), 'base64url'));
      },
      ms,
      10,
    );
    // What jose calls for ES256 (crypto.subtle, a job on libuv's pool), without jose's parsing and checks.
    const cryptoKey = await webcrypto.subtle.importKey(
      'spki',
      publicKey.export({ type: 'spki', format: 'der' }),
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['verify'],
    );
    const ecdsa = { name: 'ECDSA', hash: 'SHA-256' };
    const subtle = await measureAsync(
      'WebCrypto subtle.verify only (what jose calls; no JWT parsing, no claims)',
      (i) => {
        const t = tokens[i % tokens.length] as string;
        const dot = t.lastIndexOf('.');
        return webcrypto.subtle.verify(ecdsa, cryptoKey, Buffer.from(t.slice(dot + 1), 'base64url'), Buffer.from(t.slice(0, dot)));
      },
      ms,
    );

    const secret = new TextEncoder().encode('a-bench-secret-of-at-least-32-bytes!!');
    const hsTokens = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        new SignJWT({ sub: `user-${i}`, scope: 'customers:read' })
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime('6h')
          .sign(secret),
      ),
    );
    const hmacKey = await webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    const hsOptions = { ...OPTIONS, algorithms: ['HS256'] };
    const hsImported = await measureAsync(
      'jose jwtVerify HS256, key imported once (hypergate)',
      (i) => jwtVerify(hsTokens[i % 200] as string, hmacKey, hsOptions),
      ms,
    );
    const hsBytes = await measureAsync(
      'jose jwtVerify HS256, Uint8Array secret (re-imported per call)',
      (i) => jwtVerify(hsTokens[i % 200] as string, secret, hsOptions),
      ms,
    );
    return [
      {
        title: 'JWT verification, ES256',
        choice: 'hypergate verifies with jose once per token, then serves it from the token cache; this is the cost of one verification.',
        rows: [es, subtle, raw],
      },
      { title: 'JWT verification, HS256', choice: 'hypergate imports auth.secret once as a CryptoKey (src/auth/keys.ts).', rows: [hsImported, hsBytes] },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
