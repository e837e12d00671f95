/** The media type each write takes (RFC 9110 section 9.3; RFC 7396 for PATCH): OPTIONS and 415s name them. */
export const WRITE_BODY_TYPES = {
  POST: 'application/json',
  PUT: 'application/json',
  PATCH: 'application/merge-patch+json',
} as const;

/**
 * The media type of a Content-Type field value (RFC 9110 section 8.3.1): type/subtype, lower-cased
 * (they are case-insensitive), without parameters; '' when there is no single value.
 */
export function mediaTypeOf(value: string | readonly string[] | undefined): string {
  if (typeof value !== 'string') return '';
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
}

/** Is this media type (as mediaTypeOf gives it) JSON: application/json or a structured +json suffix (RFC 6839 section 3.1)? */
export function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * The media type of a Content-Type field value, as mediaTypeOf gives it, when its charset (if
 * any) is UTF-8: JSON is UTF-8 (RFC 8259 section 8.1), so another charset is refused rather than
 * misread. null when there is no usable value.
 */
export function jsonMediaType(header: string | undefined): string | null {
  if (header === undefined) return null;
  const [, ...params] = header.split(';');
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (name === 'charset' && value !== 'utf-8' && value !== 'utf8') return null;
  }
  const media = mediaTypeOf(header);
  return media === '' ? null : media;
}
