import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Characters of the random part: 32 base-62 characters are 190 bits. */
const RANDOM_CHARS = 32;
/** Characters of the checksum: a CRC32 (below 2^32) fits in 6 base-62 characters. */
const CHECKSUM_CHARS = 6;
const BODY = /^[0-9A-Za-z]+$/;

/** A number below 62^width as exactly `width` base-62 characters. */
function base62(value: number, width: number): string {
  let text = '';
  for (let i = 0; i < width; i++) {
    text = BASE62.charAt(value % 62) + text;
    value = Math.floor(value / 62);
  }
  return text;
}

function checksumOf(random: string): string {
  return base62(crc32(random), CHECKSUM_CHARS);
}

/**
 * A new API key: `prefix`, 32 random base-62 characters (190 bits, from crypto.randomBytes with
 * no modulo bias) and a 6-character CRC32 of them, as GitHub's tokens are made: the prefix lets a
 * leaked key be recognised, the checksum lets a mistyped or truncated one be refused without a lookup.
 */
export function newApiKey(prefix: string): string {
  let random = '';
  while (random.length < RANDOM_CHARS) {
    for (const byte of randomBytes(RANDOM_CHARS)) {
      // 248 = 4 × 62: bytes from 248 up would favour the first characters.
      if (byte < 248 && random.length < RANDOM_CHARS) random += BASE62.charAt(byte % 62);
    }
  }
  return prefix + random + checksumOf(random);
}

/** Is `key` one this gateway could have made: the prefix, the length, the alphabet and the checksum? */
export function isWellFormedApiKey(key: string, prefix: string): boolean {
  if (key.length !== prefix.length + RANDOM_CHARS + CHECKSUM_CHARS || !key.startsWith(prefix)) return false;
  const body = key.slice(prefix.length);
  if (!BODY.test(body)) return false;
  return checksumOf(body.slice(0, RANDOM_CHARS)) === body.slice(RANDOM_CHARS);
}

/** What is stored and compared of a key: its SHA-256, in hex. The key itself is kept nowhere. */
export function apiKeyHash(key: string): string {
  return hash('sha256', key, 'hex');
}

/** A stored hash as the file and Redis hold it: 64 lower-case hex digits. */
export function isApiKeyHash(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}
