import { HgError } from '../lib/errors.ts';
import { entityTags, parseIfMatch } from './preconditions.ts';

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
  // The weak comparison compares opaque tags: W/ off both sides (the current one is weak when an
  // upstream's W/ validator was kept).
  const current = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const candidate of entityTags(trimmed) ?? trimmed.split(',')) {
    let tag = candidate.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === current) return true;
  }
  return false;
}

/**
 * If-Match on a read (RFC 9110 section 13.1.1): holds for "*" (the resource has a current
 * representation: it is being answered) or when a listed tag is the current ETag by the strong
 * comparison (W/"x" never matches). When it does not hold the read is a 412, checked before
 * If-None-Match (section 13.2.2, step 1). A value that is neither "*" nor a list of entity-tags is a
 * 400, as on writes (parseIfMatch).
 */
export function checkIfMatch(header: string, etag: string): void {
  // A weak current ETag (an upstream's W/ validator, kept weak) matches nothing by the strong
  // comparison (RFC 9110 section 8.8.3.2): only "*" holds then.
  const weak = etag.startsWith('W/');
  if (header === etag && !weak) return;
  const ifMatch = parseIfMatch(header);
  if (ifMatch === '*' || (!weak && ifMatch?.includes(etag) === true)) return;
  throw new HgError('HG_ERR_PRECONDITION_FAILED', { detail: 'If-Match names no ETag of the current representation.' });
}
