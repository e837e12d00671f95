import { OVERSIZED_CLAIM, type ClaimValue } from '../auth/claims.ts';
import { HgError } from '../lib/errors.ts';

/** Visible ASCII (RFC 9110 section 5.5, VCHAR) but `%`, which starts an encoded octet: sent as it is. */
const PLAIN = /^[\x21\x22\x23\x24\x26-\x7e]*$/;

/**
 * Each character that is not visible ASCII, and `%`, as the percent-encoded octets of its UTF-8
 * (RFC 3986 section 2.1): one decodeURIComponent gives the claim back, and the header value is
 * visible ASCII only, which every HTTP stack takes (raw bytes above 0x7F are read as Latin-1 by
 * some and refused by others; CR and LF would end the header). Throws URIError for a lone
 * surrogate, which has no UTF-8.
 */
function percentEncoded(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.charCodeAt(0);
    out += code >= 0x21 && code <= 0x7e && code !== 0x25 ? char : encodeURIComponent(char);
  }
  return out;
}

function notForwardable(claim: string, why: string): HgError {
  return new HgError('HG_ERR_CLAIM_NOT_FORWARDABLE', { detail: `The token's "${claim}" claim cannot be forwarded to the upstream service: ${why}.` });
}

/**
 * A kept claim's value as its forwarded header carries it, or the 400 when it cannot be sent:
 * longer than `maxBytes` as sent, or not valid Unicode. The request is then refused before
 * anything is sent (never sent without the identity, never counted against the service).
 */
export function claimHeaderValue(claim: string, value: Exclude<ClaimValue, undefined>, maxBytes: number): string | HgError {
  if (typeof value === 'number') return String(value);
  if (value === OVERSIZED_CLAIM) return notForwardable(claim, `it is longer than ${maxBytes} bytes`);
  let sent = value;
  if (!PLAIN.test(value)) {
    try {
      sent = percentEncoded(value);
    } catch {
      return notForwardable(claim, 'it is not valid Unicode (a lone surrogate)');
    }
  }
  // Visible ASCII only by now: one byte a character.
  return sent.length <= maxBytes ? sent : notForwardable(claim, `it is longer than ${maxBytes} bytes`);
}
