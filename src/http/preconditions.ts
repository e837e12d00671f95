import { HgError } from '../errors.ts';

/** An entity-tag (RFC 9110 section 8.8.3): optional W/, then a quoted opaque-tag of etagc characters. */
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/** If-Match as a client sent it: any current representation (`*`), or a list of entity-tags. */
export type IfMatch = '*' | readonly string[];

/**
 * Parses If-Match (RFC 9110 section 13.1.1): "*" or a comma-separated list of entity-tags; a value
 * that is neither is a 400 (RFC 9110 leaves it to the server; guessing would risk a lost update).
 */
export function parseIfMatch(header: string | undefined): IfMatch | null {
  if (header === undefined) return null;
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const tags = trimmed.split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (tags.length === 0 || !tags.every((t) => ENTITY_TAG.test(t))) {
    throw new HgError('HG_ERR_BAD_REQUEST', { detail: 'If-Match must be "*" or a list of entity-tags ("..." or W/"...").' });
  }
  return tags;
}

/** Longest Idempotency-Key accepted. */
const MAX_KEY = 255;

/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header section 2): an sf-string (RFC 8941
 * section 3.3.3), a quoted string of printable ASCII where only \" and \\ are escapes. Returns the
 * key's characters, or null when the header is absent; anything else is a 400 naming the header.
 */
export function parseIdempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  const text = header.trim();
  const invalid = (): HgError => new HgError('HG_ERR_BAD_REQUEST', { detail: `Idempotency-Key must be a quoted string (RFC 8941 sf-string) of 1 to ${MAX_KEY} printable characters, e.g. "8e03978e-40d5-43e8-bc93-6894a57f9324".` });
  if (text.length < 3 || text.charCodeAt(0) !== 34 || text.charCodeAt(text.length - 1) !== 34) throw invalid();
  let key = '';
  for (let i = 1; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) throw invalid();
    if (c === 92) {
      const next = text.charCodeAt(++i);
      // An escape needs a character of its own before the closing quote.
      if (i >= text.length - 1 || (next !== 34 && next !== 92)) throw invalid();
      key += String.fromCharCode(next);
    } else if (c === 34) {
      throw invalid();
    } else {
      key += text[i];
    }
  }
  if (key.length === 0 || key.length > MAX_KEY) throw invalid();
  return key;
}
