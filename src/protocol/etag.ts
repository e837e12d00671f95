import { createHash } from 'node:crypto';

/** Characters of the render suffix: 8 base64url characters, 48 bits. */
const SUFFIX_CHARS = 8;

/** A strong or weak entity-tag as RFC 9110 section 8.8.3 spells it (no CR, LF or other control character). */
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

export function isEntityTag(value: string): boolean {
  return ENTITY_TAG.test(value);
}

/** A strong validator made from the exact bytes of a body (RFC 9110 section 8.8.3): when the upstream gives none. */
export function bodyEtag(body: string): string {
  return `"${createHash('sha256').update(body, 'utf8').digest('base64url').slice(0, 27)}"`;
}

/**
 * What makes one rendering of an upstream version differ from another: the resource's
 * declaration (fields, links, ...), the format and Vary. The same upstream version rendered in
 * JSON and in HAL, or before and after `exposeFields` changed, must carry different ETags.
 */
export function renderSuffix(declaration: string, contentType: string, vary: string): string {
  return createHash('sha256').update(`${declaration}\u0000${contentType}\u0000${vary}`).digest('base64url').slice(0, SUFFIX_CHARS);
}

/**
 * Our ETag for a representation of the upstream version `upstream` (its own entity-tag): the
 * upstream's opaque tag with the render suffix appended, weak when the upstream's is weak. It can
 * be turned back into the upstream's tag (upstreamEtagOf), so If-Match reaches the upstream as a
 * validator it knows, and the upstream decides atomically.
 */
export function derivedEtag(upstream: string, suffix: string): string {
  const weak = upstream.startsWith('W/');
  const opaque = upstream.slice(weak ? 3 : 1, -1);
  return `${weak ? 'W/' : ''}"${opaque}.${suffix}"`;
}

/** The upstream entity-tag behind one of our ETags with this suffix, or null when it is not one. */
export function upstreamEtagOf(ours: string, suffix: string): string | null {
  const weak = ours.startsWith('W/');
  const quoted = weak ? ours.slice(2) : ours;
  const end = `.${suffix}"`;
  if (!quoted.startsWith('"') || !quoted.endsWith(end) || quoted.length < end.length + 1) return null;
  return `${weak ? 'W/' : ''}"${quoted.slice(1, -end.length)}"`;
}
