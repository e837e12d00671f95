import type { IncomingMessage } from 'node:http';
import { invalidRequest, missingCredentials } from './challenge.ts';

/** RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Node keeps only the first Authorization header in req.headers; a second one must not slip by. */
export function countAuthorizationHeaders(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name !== undefined && name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}

const BEARER = 'bearer';

/**
 * Does the value begin with "bearer" in any case? Compared character by character, so a request
 * allocates no slice and no lower-cased copy: `c | 0x20` is an ASCII letter's lower case, and only
 * that letter's two cases give it (no other character lower-cases to b, e, a or r).
 */
function startsWithBearer(value: string): boolean {
  if (value.length < BEARER.length) return false;
  for (let i = 0; i < BEARER.length; i++) if ((value.charCodeAt(i) | 0x20) !== BEARER.charCodeAt(i)) return false;
  return true;
}

/**
 * Extracts the bearer token from the Authorization header. The token's characters are checked
 * later, only when it is not already in the verified-token cache (a cached token was checked).
 */
export function readBearerToken(req: IncomingMessage, maxTokenBytes: number): string {
  const header = req.headers.authorization;
  if (header === undefined) throw missingCredentials();
  if (countAuthorizationHeaders(req.rawHeaders) !== 1) throw invalidRequest('more than one Authorization header');
  if (header.length > maxTokenBytes + 7) throw invalidRequest('the token is too long');
  // "Bearer" is case-insensitive (RFC 9110 section 11.1), followed by 1*SP.
  if (!startsWithBearer(header)) {
    throw missingCredentials('This resource accepts only the Bearer authorization scheme.');
  }
  if (header.length === 6) throw invalidRequest('the Bearer scheme carries no token');
  if (header.charCodeAt(6) !== 32) throw missingCredentials('This resource accepts only the Bearer authorization scheme.');
  let start = 7;
  while (header.charCodeAt(start) === 32) start++;
  if (start === header.length) throw invalidRequest('the Bearer scheme carries no token');
  return start === 7 ? header.slice(7) : header.slice(start);
}

/** Syntax check for tokens the cache has not seen. */
export function assertTokenSyntax(token: string): void {
  if (!B64TOKEN.test(token)) throw invalidRequest('the token contains characters a bearer token may not have');
}

/**
 * Is the token's signature segment the one canonical BASE64URL spelling of its bytes (RFC 7515
 * section 2; RFC 4648 section 3.5)? No '=' padding, and the bits of the last character that carry
 * no byte at zero: jose decodes any value there (and the padding) to the same signature, so every
 * other spelling would verify as another token, with its own cache entry. A length that leaves one
 * character over is no encoding at all. Anything outside the alphabet jose refuses itself.
 */
export function isCanonicalSignature(token: string): boolean {
  const length = token.length - token.lastIndexOf('.') - 1;
  const last = base64UrlValue(token.charCodeAt(token.length - 1));
  if (last === -1 || length % 4 === 1) return false;
  const spare = length % 4 === 2 ? 15 : length % 4 === 3 ? 3 : 0;
  return (last & spare) === 0;
}

/** The 6-bit value of a BASE64URL character; -1 for any other, '=' included. */
function base64UrlValue(c: number): number {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c === 0x2d) return 62;
  if (c === 0x5f) return 63;
  return -1;
}
