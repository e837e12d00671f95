/**
 * Real ES256 tokens for the benchmarks: one key pair per run, the public key in a PEM file that
 * hypergate (auth.publicKeyFile) and the peer both read, tokens signed with node:crypto (about
 * 20k a second, so a pool for fresh-tokens is minted in seconds).
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ISSUER = 'https://issuer.bench.hypergate.invalid/';
export const AUDIENCE = 'hypergate-bench';
export const SCOPE = 'customers:read';
/** Long enough for any full run; a token expiring mid-run would turn into 401s. */
const TTL_SECONDS = 6 * 3600;

export interface BenchKeys {
  readonly privateKey: KeyObject;
  /** Path of the public key (SPKI PEM). */
  readonly publicKeyFile: string;
}

export function makeKeys(dir: string): BenchKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicKeyFile = join(dir, 'public.pem');
  writeFileSync(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  return { privateKey, publicKeyFile };
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT' })).toString('base64url');

/** A compact ES256 JWT (RFC 7515 signature as r||s, RFC 7518 section 3.4), with any further claims given. */
export function mint(keys: BenchKeys, sub: string, scope = SCOPE, claims: Readonly<Record<string, string>> = {}): string {
  const iat = Math.floor(Date.now() / 1000);
  const payload = Buffer.from(JSON.stringify({ sub, scope, iss: ISSUER, aud: AUDIENCE, iat, exp: iat + TTL_SECONDS, ...claims })).toString('base64url');
  const input = `${HEADER}.${payload}`;
  const signature = sign('sha256', Buffer.from(input), { key: keys.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * Writes `count` lines `<path> <token>` to `file` for the wrk/autocannon list drivers; `line(i)`
 * gives the path and the token subject of line i.
 */
export function writeRequestList(file: string, keys: BenchKeys, count: number, line: (i: number) => { path: string; sub: string }): void {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const { path, sub } = line(i);
    out.push(`${path} ${mint(keys, sub)}`);
  }
  writeFileSync(file, `${out.join('\n')}\n`);
}
