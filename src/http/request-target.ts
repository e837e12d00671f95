import { HgError } from '../lib/errors.ts';

/**
 * The request target as the router sees it. An origin-form target (`/path?query`, what nearly
 * every request brings) is given back as it is; dispatch tests its first character itself so
 * the common request does not even make this call.
 *
 * - absolute-form (`http://host/path?query`): RFC 9112 section 3.2.2 says a server MUST accept it,
 *   though clients send it only to proxies, and section 3.3 with RFC 9110 section 7.2 say the
 *   target URI is then this URI, not one built from Host. Its path and query are the origin-form
 *   that is served; an empty path is "/" (RFC 9112 section 3.2.1). The authority selects nothing:
 *   the gateway is the origin server of the one set of resources it serves, not a forward proxy,
 *   so a request naming another host gets what the same path gets here.
 * - asterisk-form (`*`) and anything else beginning with '*' is left as it is (the router has no
 *   route for it: 404, and OPTIONS * the same).
 * - Anything else is not a request target this server takes: a 400. llhttp has already refused
 *   what has no `scheme://` at all (`http:/x`, `a:b`), spaces and control bytes.
 */
export function routableTarget(target: string): string {
  const first = target.charCodeAt(0);
  if (first === SLASH || first === ASTERISK) return target;
  const schemeEnd = target.indexOf('://');
  const scheme = schemeEnd === -1 ? '' : target.slice(0, schemeEnd).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') throw badTarget(NOT_HTTP);
  const start = schemeEnd + 3;
  let end = start;
  while (end < target.length) {
    const c = target.charCodeAt(end);
    if (c === SLASH || c === QUESTION || c === HASH) break;
    end++;
  }
  if (!isAuthority(target, start, end)) throw badTarget(BAD_AUTHORITY);
  // RFC 9112 section 3.2: a request target carries no fragment (it is the client's alone).
  if (target.indexOf('#', end) !== -1) throw badTarget(FRAGMENT);
  return end === target.length ? '/' : target.charCodeAt(end) === SLASH ? target.slice(end) : `/${target.slice(end)}`;
}

const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;
const ASTERISK = 0x2a;
const COLON = 0x3a;
const PERCENT = 0x25;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const NOT_HTTP = 'The request target is neither a path nor an absolute http or https URI (RFC 9112 section 3.2).';
const BAD_AUTHORITY =
  'The authority of the absolute request target is not a host and optional port: user info, an empty host or a malformed one is refused (RFC 9110 section 4.2).';
const FRAGMENT = 'The request target has a fragment (#); a request target has none (RFC 9112 section 3.2).';

function badTarget(detail: string): HgError {
  return new HgError('HG_ERR_BAD_REQUEST', { detail });
}

/** RFC 3986 section 2.2-2.3: unreserved and sub-delims, the bytes of a reg-name besides pct-encoded. */
const NAME_BYTE = ((): Uint8Array => {
  const table = new Uint8Array(128);
  for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=") table[c.charCodeAt(0)] = 1;
  return table;
})();

/**
 * `host [ ":" port ]` of RFC 3986 section 3.2 between `start` and `end`, without userinfo (RFC
 * 9110 section 4.2.4: a recipient treats it as an error) and with a non-empty host (section
 * 4.2.1: a recipient MUST reject an http URI with an empty host). The host is a reg-name or IPv4
 * address (unreserved, sub-delims, pct-encoded) or an IP literal in brackets, which may hold ':'
 * and an RFC 6874 zone id ("%25eth0"); the port is digits, possibly none.
 */
function isAuthority(s: string, start: number, end: number): boolean {
  let i = start;
  if (s.charCodeAt(i) === OPEN_BRACKET) {
    i++;
    const first = i;
    while (i < end && s.charCodeAt(i) !== CLOSE_BRACKET) {
      i = s.charCodeAt(i) === COLON ? i + 1 : nameByteEnd(s, i, end);
      if (i === -1) return false;
    }
    if (i === end || i === first) return false;
    i++;
  } else {
    while (i < end && s.charCodeAt(i) !== COLON) {
      i = nameByteEnd(s, i, end);
      if (i === -1) return false;
    }
    if (i === start) return false;
  }
  if (i === end) return true;
  if (s.charCodeAt(i) !== COLON) return false;
  for (i++; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** The index after the reg-name byte or pct-encoded triplet at `i`, or -1 when there is none. */
function nameByteEnd(s: string, i: number, end: number): number {
  const c = s.charCodeAt(i);
  if (c < 128 && NAME_BYTE[c] === 1) return i + 1;
  if (c === PERCENT && i + 2 < end && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2))) return i + 3;
  return -1;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
