/** The media type each write takes (RFC 9110 section 9.3; RFC 7396 for PATCH): OPTIONS and 415s name them. */
export const WRITE_BODY_TYPES = {
  POST: 'application/json',
  PUT: 'application/json',
  PATCH: 'application/merge-patch+json',
} as const;

/**
 * The media type of a Content-Type field value (RFC 9110 section 8.3.1), lower-cased without
 * parameters, and whether its charset (if any) is UTF-8: JSON is UTF-8 (RFC 8259 section 8.1), so
 * another charset is refused rather than misread. null when there is no usable value.
 */
export function jsonMediaType(header: string | undefined): string | null {
  if (header === undefined) return null;
  const [type = '', ...params] = header.split(';');
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    const value = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name === 'charset' && value !== 'utf-8' && value !== 'utf8') return null;
  }
  const media = type.trim().toLowerCase();
  return media === '' ? null : media;
}
