import { createHash, createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, importSPKI, type CryptoKey, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { systemClock } from '../lib/clock.ts';
import type { AuthConfig, JwsAlgorithm } from '../config/types.ts';
import { silentLogger } from '../observability/logger.ts';
import { emptyJwksTally } from '../observability/metrics.ts';
import { loadOrCreateDevKeys, type DevKeyPair } from './dev-keys.ts';
import { RemoteKeySet, type RemoteKeyDeps } from './remote-keys.ts';

/** Where verification keys come from, resolved once at start-up. */
export interface KeySource {
  readonly mode: 'jwks-url' | 'jwks-file' | 'public-key-file' | 'secret' | 'dev';
  /** One line for the start-up log. */
  readonly description: string;
  readonly algorithms: readonly JwsAlgorithm[];
  readonly getKey: JWTVerifyGetKey;
  /** Present in dev mode only. */
  readonly devKeys?: DevKeyPair;
  /** The fetched key set of auth.jwksUrl (cooldown, age, last failure); null for local sources. */
  readonly remote: RemoteKeySet | null;
  /**
   * A digest of what a local source was read from (the file, the secret, the dev key): equal
   * digests mean the same keys, so a reload that rereads them may keep its verified tokens. Null
   * for a JWKS URL, whose fetched set has a fingerprint of its own (RemoteKeySet).
   */
  readonly fingerprint: string | null;
}

/** The digest a local key source is compared by on reload: never the material itself. */
function digestOf(material: string): string {
  return createHash('sha256').update(material).digest('base64url');
}

const ASYMMETRIC: readonly JwsAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export class KeySourceError extends Error {
  override readonly name = 'KeySourceError';
}

function readKeyFile(key: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new KeySourceError(`${key}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

function algorithmsForKey(key: KeyObject): readonly JwsAlgorithm[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return ['ES256'];
      if (curve === 'secp384r1') return ['ES384'];
      if (curve === 'secp521r1') return ['ES512'];
      return [];
    }
    default:
      return [];
  }
}

function narrow(configured: readonly JwsAlgorithm[] | null, fitting: readonly JwsAlgorithm[], key: string): readonly JwsAlgorithm[] {
  if (configured === null) return fitting;
  const allowed = configured.filter((a) => fitting.includes(a));
  if (allowed.length === 0)
    throw new KeySourceError(`auth.algorithms: none of ${configured.join(', ')} fits the key in ${key} (it fits ${fitting.join(', ') || 'nothing'})`);
  return allowed;
}

/** A getKey that answers only for the algorithms it has a key for; jose checks the allow-list first. */
function byAlgorithm(keys: ReadonlyMap<string, CryptoKey>): JWTVerifyGetKey {
  return (header) => {
    const key = header.alg === undefined ? undefined : keys.get(header.alg);
    if (key === undefined) throw new KeySourceError('no key for this algorithm');
    return key;
  };
}

async function fromPublicKeyFile(auth: AuthConfig, file: string): Promise<KeySource> {
  const pem = readKeyFile('auth.publicKeyFile', file);
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new KeySourceError(`auth.publicKeyFile: ${file} holds a private key; give the gateway the public key only`);
  }
  let keyObject: KeyObject;
  try {
    keyObject = createPublicKey(pem);
  } catch {
    throw new KeySourceError(`auth.publicKeyFile: ${file} is not a PEM public key or certificate`);
  }
  const algorithms = narrow(auth.algorithms, algorithmsForKey(keyObject), 'auth.publicKeyFile');
  const spki = keyObject.export({ type: 'spki', format: 'pem' }).toString();
  const keys = new Map<string, CryptoKey>();
  for (const alg of algorithms) keys.set(alg, await importSPKI(spki, alg));
  return {
    mode: 'public-key-file',
    description: `public key file ${file} (${algorithms.join(', ')})`,
    algorithms,
    getKey: byAlgorithm(keys),
    remote: null,
    fingerprint: digestOf(spki),
  };
}

const HMAC_HASH: Partial<Record<JwsAlgorithm, string>> = { HS256: 'SHA-256', HS384: 'SHA-384', HS512: 'SHA-512' };

async function fromSecret(auth: AuthConfig, secret: string): Promise<KeySource> {
  const algorithms = auth.algorithms ?? [];
  const keys = new Map<string, CryptoKey>();
  // Imported once: handing jose raw bytes would make it import the key on every verification.
  for (const alg of algorithms) {
    const hash = HMAC_HASH[alg];
    if (hash) keys.set(alg, await webcrypto.subtle.importKey('raw', Buffer.from(secret), { name: 'HMAC', hash }, false, ['verify']));
  }
  return {
    mode: 'secret',
    description: `shared secret (${algorithms.join(', ')})`,
    algorithms,
    getKey: byAlgorithm(keys),
    remote: null,
    fingerprint: digestOf(secret),
  };
}

function fromJwksFile(auth: AuthConfig, file: string): KeySource {
  let jwks: JSONWebKeySet;
  let text: string;
  try {
    text = readKeyFile('auth.jwksFile', file);
    jwks = JSON.parse(text) as JSONWebKeySet;
  } catch (err) {
    if (err instanceof KeySourceError) throw err;
    throw new KeySourceError(`auth.jwksFile: ${file} is not valid JSON`);
  }
  if (!Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new KeySourceError(`auth.jwksFile: ${file} has no "keys" array with keys in it`);
  if (jwks.keys.some((k) => typeof k === 'object' && k !== null && 'd' in k)) {
    throw new KeySourceError(`auth.jwksFile: ${file} holds private key material; give the gateway public keys only`);
  }
  const algorithms = narrow(auth.algorithms, ASYMMETRIC, 'auth.jwksFile');
  return {
    mode: 'jwks-file',
    description: `JWKS file ${file} (${jwks.keys.length} keys)`,
    algorithms,
    getKey: createLocalJWKSet(jwks),
    remote: null,
    fingerprint: digestOf(text),
  };
}

/** The key set is not fetched here: the caller decides when (start-up, reload, --check-config). */
function fromJwksUrl(auth: AuthConfig, url: string, deps: RemoteKeyDeps): KeySource {
  const algorithms = narrow(auth.algorithms, ASYMMETRIC, 'auth.jwksUrl');
  const remote = new RemoteKeySet({ url, algorithms, cooldownMs: auth.jwksCooldownMs, timeoutMs: auth.jwksTimeoutMs, maxBytes: auth.jwksMaxBytes }, deps);
  return { mode: 'jwks-url', description: `JWKS ${url}`, algorithms, getKey: remote.getKey, remote, fingerprint: null };
}

async function fromDevKeys(dir: string): Promise<KeySource> {
  const devKeys = await loadOrCreateDevKeys(dir);
  return {
    mode: 'dev',
    description: `DEV MODE: local ES256 key in ${dir} (not for production)`,
    algorithms: ['ES256'],
    getKey: createLocalJWKSet({ keys: [devKeys.publicJwk] }),
    devKeys,
    remote: null,
    fingerprint: digestOf(JSON.stringify(devKeys.publicJwk)),
  };
}

/** The key source `auth` names; `deps` (clock, log, metrics) serve a remote key set. */
export async function resolveKeySource(
  auth: AuthConfig,
  deps: RemoteKeyDeps = { clock: systemClock, logger: silentLogger, tally: emptyJwksTally() },
): Promise<KeySource> {
  if (auth.jwksUrl !== null) return fromJwksUrl(auth, auth.jwksUrl, deps);
  if (auth.jwksFile !== null) return fromJwksFile(auth, auth.jwksFile);
  if (auth.publicKeyFile !== null) return fromPublicKeyFile(auth, auth.publicKeyFile);
  if (auth.secret !== null) return fromSecret(auth, auth.secret);
  return fromDevKeys(auth.devKeyDir);
}
