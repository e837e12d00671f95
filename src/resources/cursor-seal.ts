import { createHmac, timingSafeEqual } from 'node:crypto';

/** Longest cursor payload (the upstream's cursor, or the query of its next-page link), in bytes. */
export const MAX_CURSOR_PAYLOAD = 2048;
/** The MAC's length in the token: 16 bytes of HMAC-SHA256, 22 base64url characters. */
const MAC_BYTES = 16;
const TOKEN = /^[A-Za-z0-9_-]{1,2800}\.[A-Za-z0-9_-]{22}$/;

/**
 * Seals the cursors of paging links: a public cursor is `<payload>.<mac>`, both base64url (so it is
 * URL-safe as it is), where the payload is what the upstream needs for the next page and the MAC
 * is an HMAC-SHA256 over the payload and the scope it was made for (the resource, the collection
 * path and the rest of its canonical query). A cursor changed in any byte, or moved to another
 * collection, filter or limit, does not open, and the request is refused before anything is
 * forwarded: a client can only follow the cursors the gateway handed out.
 */
export class CursorSeal {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  #mac(scope: string, payload: string): Buffer {
    return createHmac('sha256', this.#key).update(scope).update('\0').update(payload).digest().subarray(0, MAC_BYTES);
  }

  /** The public cursor for `payload` within `scope`. */
  seal(scope: string, payload: string): string {
    const text = Buffer.from(payload, 'utf8').toString('base64url');
    return `${text}.${this.#mac(scope, text).toString('base64url')}`;
  }

  /** The payload of a cursor sealed for `scope`, or null when it was not (changed, forged, or another scope's). */
  open(scope: string, token: string): string | null {
    if (!TOKEN.test(token)) return null;
    const dot = token.indexOf('.');
    const text = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    if (mac.length !== MAC_BYTES || !timingSafeEqual(mac, this.#mac(scope, text))) return null;
    return Buffer.from(text, 'base64url').toString('utf8');
  }
}
