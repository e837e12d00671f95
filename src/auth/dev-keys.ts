import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

export interface DevKeyPair {
  readonly kid: string;
  readonly publicJwk: JWK;
  readonly privateKey: CryptoKey;
  readonly dir: string;
}

const PRIVATE_FILE = 'private.jwk.json';

/**
 * Dev auth mode: an ES256 key pair made on first start and kept in an ignored folder, so tokens
 * minted with `npm run token` keep working across restarts. Never used when a key source is configured.
 */
export async function loadOrCreateDevKeys(dir: string): Promise<DevKeyPair> {
  const file = join(dir, PRIVATE_FILE);
  let privateJwk: JWK;
  try {
    privateJwk = JSON.parse(readFileSync(file, 'utf8')) as JWK;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`auth.devKeyDir: cannot read ${file} (${(err as Error).message})`, { cause: err });
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateJwk = await exportJWK(pair.privateKey);
    privateJwk.kid = await calculateJwkThumbprint(privateJwk);
    privateJwk.alg = 'ES256';
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify(privateJwk)}\n`, { mode: 0o600 });
  }
  const { d: _d, ...publicJwk } = privateJwk;
  const privateKey = (await importJWK(privateJwk, 'ES256')) as CryptoKey;
  return { kid: privateJwk.kid ?? '', publicJwk: { ...publicJwk, use: 'sig' }, privateKey, dir };
}
