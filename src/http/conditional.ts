/**
 * Does If-None-Match match the current ETag? (RFC 9110 section 13.1.2): "*" matches any current
 * representation; otherwise the weak comparison applies, so W/"x" matches "x".
 */
export function ifNoneMatchMatches(header: string, etag: string): boolean {
  if (header === etag) return true;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  for (const candidate of trimmed.split(',')) {
    let tag = candidate.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}
