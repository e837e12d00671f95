import { entityTags } from './preconditions.ts';

/**
 * Does If-None-Match match the current ETag? (RFC 9110 section 13.1.2): "*" matches any current
 * representation; otherwise the weak comparison applies, so W/"x" matches "x". A well-formed list
 * is split by its quoted tags (a comma is an etagc character, so "v1,2" is one tag); any other
 * value falls back to its comma-separated pieces, so a tag sent after junk still matches (a miss
 * only costs a 200 where a 304 was possible, never correctness).
 */
export function ifNoneMatchMatches(header: string, etag: string): boolean {
  if (header === etag) return true;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  for (const candidate of entityTags(trimmed) ?? trimmed.split(',')) {
    let tag = candidate.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}
