/** A character V8 cannot keep in a one-byte (Latin-1) string. */
const TWO_BYTE_CHAR = /[^\u0000-\u00ff]/;

/**
 * What a string of `utf8Bytes` UTF-8 bytes holds in memory, for the byte bounds of the caches: V8
 * keeps a string with any character past U+00FF at two bytes a character (for mostly-ASCII text
 * about twice its UTF-8 length), any other at one byte a character (never more than its UTF-8
 * length). The larger of the two, so a bound is never passed by counting the smaller.
 */
export function heldBytes(text: string, utf8Bytes: number): number {
  return utf8Bytes !== text.length && TWO_BYTE_CHAR.test(text) ? Math.max(utf8Bytes, 2 * text.length) : utf8Bytes;
}
