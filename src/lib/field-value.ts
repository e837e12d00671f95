/**
 * A header field value that may be sent on (RFC 9110 section 5.5): visible characters, spaces and
 * tabs inside, none at either end, no CR, LF or NUL.
 */
const FIELD_VALUE = /^[\x21-\x7e\x80-\xff]([\x20\x09\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/;

export function isFieldValue(text: string): boolean {
  return FIELD_VALUE.test(text);
}
