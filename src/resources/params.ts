/**
 * Path parameter types. A segment that does not fit its type names no resource: the route answers
 * 404 and nothing reaches an upstream. Values are compared exactly: no percent-decoding, no case
 * folding, so one resource has one spelling (its cache key and its links.self).
 */
export type ParamType = 'integer' | 'string';
export type ParamValue = number | string;

/** The largest integer a JSON number carries exactly, 2^53 - 1, has 16 digits. */
const MAX_INTEGER_DIGITS = 16;
/** Longest "string" parameter. */
export const MAX_STRING_PARAM = 64;

/**
 * A canonical positive integer: digits only, no sign, no leading zero, 1 to 2^53-1. Anything else
 * (percent-encodings included) is null.
 */
export function parseCanonicalInteger(segment: string): number | null {
  const length = segment.length;
  if (length === 0 || length > MAX_INTEGER_DIGITS) return null;
  const first = segment.charCodeAt(0);
  if (first < 49 || first > 57) return null; // '1'..'9'
  for (let i = 1; i < length; i++) {
    const c = segment.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const n = Number(segment);
  return n <= Number.MAX_SAFE_INTEGER ? n : null;
}

/** RFC 3986 unreserved characters: A-Z a-z 0-9 - . _ ~ (nothing a URL would have to encode). */
function isUnreserved(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 46 || c === 95 || c === 126;
}

/**
 * "." and "..": dot-segments (RFC 3986 section 5.2.4). As a value they would build an upstream path
 * that any normalising upstream or proxy reads as another resource ("/v2/shops/../products/x" is
 * "/v2/products/x"), one the declaration never named.
 */
export function isDotSegment(segment: string): boolean {
  return segment === '.' || segment === '..';
}

/** A "string" parameter: 1 to 64 unreserved characters, taken exactly as sent, and not a dot-segment. */
export function parseStringParam(segment: string): string | null {
  const length = segment.length;
  if (length === 0 || length > MAX_STRING_PARAM || isDotSegment(segment)) return null;
  for (let i = 0; i < length; i++) if (!isUnreserved(segment.charCodeAt(i))) return null;
  return segment;
}

export function parseParam(type: ParamType, segment: string): ParamValue | null {
  return type === 'integer' ? parseCanonicalInteger(segment) : parseStringParam(segment);
}

/**
 * A value from an upstream record (an identity field, a field a link names) as a parameter of this
 * type: an integer param takes a JSON number or a string of its canonical digits; a string param
 * takes a string of its characters, or an integer (then its digits). null when it does not fit.
 */
export function paramFromValue(type: ParamType, value: unknown): ParamValue | null {
  if (type === 'integer') {
    if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : null;
    return typeof value === 'string' ? parseCanonicalInteger(value) : null;
  }
  if (typeof value === 'string') return parseStringParam(value);
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
}

/** JSON Schema of a parameter of this type, as the OpenAPI document describes it. */
export function paramSchema(type: ParamType): Readonly<Record<string, unknown>> {
  return type === 'integer'
    ? { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }
    : { type: 'string', minLength: 1, maxLength: MAX_STRING_PARAM, pattern: '^(?!\\.\\.?$)[A-Za-z0-9._~-]+$' };
}

/** What a parameter of this type accepts, in words (OpenAPI descriptions, docs/resources.md). */
export function paramRule(type: ParamType): string {
  return type === 'integer'
    ? 'Digits only, no sign or leading zero, 1 to 2^53-1; any other spelling is 404.'
    : `1 to ${MAX_STRING_PARAM} of the characters A-Z a-z 0-9 - . _ ~, compared exactly, but not "." or ".."; any other spelling is 404.`;
}
