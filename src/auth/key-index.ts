import { importJWK, type CryptoKey, type JWK } from 'jose';
import type { JwsAlgorithm } from '../config/types.ts';
import { JwksFetchError } from './jwks-fetch.ts';

/**
 * Most keys a key set may hold. Identity providers publish a handful (the key in use, the next
 * one, the last one); a set of thousands is a fault or an attack, and each key is imported (and
 * RSA keys without `alg` once per RSA algorithm). A larger set is refused whole, so a cut-down set
 * never silently lacks the key in use: the last good set stays in use instead.
 */
export const MAX_JWKS_KEYS = 100;

/** What a lookup finds: the key, `AMBIGUOUS` when several fit (none is chosen, as jose does), or undefined. */
export const AMBIGUOUS = null;
type Slot = CryptoKey | typeof AMBIGUOUS;

/** The algorithms a public JWK can verify, from its type and curve (RFC 7518 section 3.1, RFC 8037). */
function algorithmsOf(jwk: JWK): readonly JwsAlgorithm[] {
  switch (jwk.kty) {
    case 'RSA':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'EC':
      if (jwk.crv === 'P-256') return ['ES256'];
      if (jwk.crv === 'P-384') return ['ES384'];
      if (jwk.crv === 'P-521') return ['ES512'];
      return [];
    case 'OKP':
      return jwk.crv === 'Ed25519' ? ['EdDSA', 'Ed25519'] : [];
    default:
      return [];
  }
}

/** RFC 7517 sections 4.2 and 4.3: a key marked for another use, or without "verify" among its operations, is not for us. */
function isVerificationKey(jwk: JWK): boolean {
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return false;
  // Private key material is never imported, whatever else the set holds.
  return jwk.d === undefined;
}

function put<K>(map: Map<K, Slot>, key: K, value: CryptoKey): void {
  map.set(key, map.has(key) ? AMBIGUOUS : value);
}

/**
 * A fetched key set, each usable key imported once (jose's importJWK, per algorithm it may
 * verify) and indexed: by `kid` then algorithm, and by algorithm alone for tokens without a
 * `kid`. A lookup is two Map reads, whatever the size of the set (scanning a 20,000-key set cost
 * 2.2 ms per forged token). Selection follows jose's own key sets: a token's `kid` must equal the
 * key's; the key's `alg`, when present, must equal the token's; two fitting keys match none.
 */
export class KeyIndex {
  readonly #byKid = new Map<string, Map<string, Slot>>();
  readonly #byAlg = new Map<string, Slot>();
  /** Keys imported (a key counts once whatever its algorithms). */
  size = 0;
  /** The set as fetched, to tell on a reload whether anything changed. */
  readonly fingerprint: string;

  private constructor(fingerprint: string) {
    this.fingerprint = fingerprint;
  }

  /** Builds the index of a parsed JWKS for the allowed algorithms; throws when it is not a key set this gateway takes. */
  static async build(json: unknown, allowed: readonly JwsAlgorithm[]): Promise<KeyIndex> {
    const keys = (json as { keys?: unknown } | null)?.keys;
    if (typeof json !== 'object' || json === null || !Array.isArray(keys) || !keys.every((k) => typeof k === 'object' && k !== null && !Array.isArray(k))) {
      throw new JwksFetchError('not_jwks', 'the answer is not a JWKS (an object with a "keys" array of keys, RFC 7517 section 5)');
    }
    if (keys.length > MAX_JWKS_KEYS) throw new JwksFetchError('too_many_keys', `the key set has ${keys.length} keys, more than the ${MAX_JWKS_KEYS} accepted`);
    const index = new KeyIndex(
      keys
        .map((k) => JSON.stringify(k))
        .sort()
        .join('\n'),
    );
    for (const jwk of keys as JWK[]) {
      if (!isVerificationKey(jwk)) continue;
      const fitting = algorithmsOf(jwk).filter((alg) => allowed.includes(alg) && (jwk.alg === undefined || jwk.alg === alg));
      let imported = false;
      for (const alg of fitting) {
        let key: CryptoKey;
        try {
          key = (await importJWK(jwk, alg)) as CryptoKey;
        } catch {
          continue; // malformed key material: this key verifies nothing, the others still do
        }
        imported = true;
        put(index.#byAlg, alg, key);
        if (typeof jwk.kid !== 'string') continue;
        let byAlg = index.#byKid.get(jwk.kid);
        if (byAlg === undefined) index.#byKid.set(jwk.kid, (byAlg = new Map<string, Slot>()));
        put(byAlg, alg, key);
      }
      if (imported) index.size++;
    }
    return index;
  }

  /** The key for a token's `alg` and `kid` header parameters (jose has checked `alg` against the allow-list). */
  find(alg: unknown, kid: unknown): Slot | undefined {
    if (typeof alg !== 'string') return undefined;
    if (kid === undefined) return this.#byAlg.get(alg);
    return typeof kid === 'string' ? this.#byKid.get(kid)?.get(alg) : undefined;
  }
}
