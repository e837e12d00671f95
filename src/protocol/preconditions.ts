import { HgError } from '../lib/errors.ts';
import { parseHttpDate } from './http-date.ts';

/**
 * One element of an entity-tag list (RFC 9110 sections 8.8.3 and 5.6.1): optional W/, then a
 * quoted opaque-tag of etagc characters (which include ","), then optional whitespace and either
 * a comma or the end. Matched from where the last one ended (sticky).
 */
const ENTITY_TAG_ITEM = /[ \t]*((?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?:,|$)/y;
/** Empty list elements (RFC 9110 section 5.6.1: a recipient accepts them), before or between tags. */
const EMPTY_ITEMS = /[ \t]*(?:,[ \t]*)*/y;

/** If-Match as a client sent it, either any current representation (`*`), or a list of entity-tags. */
export type IfMatch = '*' | readonly string[];

/**
 * The entity-tags of a list (RFC 9110 section 8.8.3: If-Match, If-None-Match), split by quoted
 * tags, not by commas: a comma inside the quotes belongs to the tag. Null when the text is not such
 * a list (or lists no tag).
 */
export function entityTags(text: string): string[] | null {
  const tags: string[] = [];
  let at = 0;
  while (at < text.length) {
    EMPTY_ITEMS.lastIndex = at;
    EMPTY_ITEMS.exec(text);
    at = EMPTY_ITEMS.lastIndex;
    if (at === text.length) break;
    ENTITY_TAG_ITEM.lastIndex = at;
    const item = ENTITY_TAG_ITEM.exec(text);
    if (item === null) return null;
    tags.push(item[1] as string);
    at = ENTITY_TAG_ITEM.lastIndex;
  }
  return tags.length === 0 ? null : tags;
}

/** "*" or a list of entity-tags, as If-Match and If-None-Match take; a 400 naming `name` otherwise. */
function parseTagCondition(name: string, header: string | undefined): IfMatch | null {
  if (header === undefined) return null;
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const tags = entityTags(trimmed);
  if (tags === null) throw new HgError('HG_ERR_BAD_REQUEST', { detail: `${name} must be "*" or a list of entity-tags ("..." or W/"...").` });
  return tags;
}

/**
 * Parses If-Match (RFC 9110 section 13.1.1): "*" or a comma-separated list of entity-tags; a value
 * that is neither is a 400 (RFC 9110 leaves it to the server; guessing would risk a lost update).
 */
export function parseIfMatch(header: string | undefined): IfMatch | null {
  return parseTagCondition('If-Match', header);
}

/**
 * Parses If-None-Match on a write (RFC 9110 section 13.1.2), as strictly as If-Match: a write
 * whose condition was misread could overwrite what the client meant to keep (`*` asks for a
 * create only). Reads stay lenient (conditional.ts): a miss there only costs a 200.
 */
export function parseWriteIfNoneMatch(header: string | undefined): IfMatch | null {
  return parseTagCondition('If-None-Match', header);
}

/**
 * If-Unmodified-Since on a write as the upstream should see it (RFC 9110 section 13.1.4): the date
 * as an IMF-fixdate, or undefined when it must be ignored: the request has If-Match (which takes
 * its place), or the value is not one valid HTTP-date (a list of dates included). The upstream
 * holds the modification date, so it decides.
 */
export function ifUnmodifiedSinceOf(header: string | undefined, hasIfMatch: boolean, nowMs: number): string | undefined {
  if (header === undefined || hasIfMatch) return undefined;
  const ms = parseHttpDate(header, nowMs);
  return ms === null ? undefined : new Date(ms).toUTCString();
}

/**
 * If-Match as the strong comparison sees it (RFC 9110 section 13.1.1): a weak entity-tag (W/"…")
 * never matches, so it is passed over, as on a read (conditional.ts checkIfMatch). Null when no
 * tag is left: the condition is false whatever the current representation is (412).
 */
export function strongIfMatch(ifMatch: IfMatch): IfMatch | null {
  if (ifMatch === '*') return ifMatch;
  const strong = ifMatch.filter((tag) => !tag.startsWith('W/'));
  return strong.length === 0 ? null : strong;
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
  const invalid = (): HgError =>
    new HgError('HG_ERR_BAD_REQUEST', {
      detail: `Idempotency-Key must be a quoted string (RFC 8941 sf-string) of 1 to ${MAX_KEY} printable characters, e.g. "8e03978e-40d5-43e8-bc93-6894a57f9324".`,
    });
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
