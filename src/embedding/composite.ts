import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Representation } from '../cache/representation.ts';
import { ifNoneMatchMatches } from '../protocol/conditional.ts';
import type { HgResponse } from '../protocol/response.ts';

/**
 * What an assembled answer is made of, beyond its body: the representations it holds (the
 * resource's own first), and what makes its identity (the embed list, each part's ETag or why it
 * is missing, in a fixed order).
 */
export interface CompositeParts {
  readonly reps: readonly Representation[];
  /** Each part's ETag, or `<path>=omitted; reason=<why>` for one left out, in the order the parts were met. */
  readonly versions: readonly string[];
  readonly canonical: string;
  readonly embedStatus: string;
}

/**
 * The composite's ETag: a digest of its media type, its embed list and every part's version, so it
 * changes whenever any part's ETag does (or a part comes or goes) and differs between formats and
 * embed lists (RFC 9110 section 8.8.3: a strong validator of these exact bytes, which are a function
 * of exactly these inputs).
 */
export function compositeEtag(contentType: string, parts: CompositeParts): string {
  const hash = createHash('sha256').update(contentType).update('\u0000').update(parts.canonical);
  for (const version of parts.versions) hash.update('\u0000').update(version);
  return `"e.${hash.digest('base64url').slice(0, 27)}"`;
}

/**
 * The composite's Cache-Control: as long as its shortest-lived part stays fresh from now (RFC 9111
 * section 4.2.1: its remaining lifetime), `private` if any part is, `no-store` if any part is.
 * A stale part has no freshness left: the composite has none either.
 */
export function compositeCacheControl(reps: readonly Representation[], stale: boolean, nowMs: number): string {
  let privately = false;
  let seconds = stale ? 0 : Number.MAX_SAFE_INTEGER;
  for (const rep of reps) {
    const cc = rep.cacheControl;
    if (cc.includes('no-store')) return 'no-store';
    if (cc.includes('private')) privately = true;
    const left = rep.lifetimeSeconds - rep.ageAt(nowMs);
    if (left < seconds) seconds = left > 0 ? left : 0;
  }
  return `${privately ? 'private, ' : ''}max-age=${seconds}`;
}

const ASSEMBLED = 'hypergate; detail=assembled';

/**
 * Writes an assembled answer: 304 when If-None-Match names its ETag (which holds only while every
 * part is unchanged), else 200 (no body for HEAD) with the upstream headers the resource's service
 * exposes (`exposeHeaders`), as a plain read of its URL would carry them. It is made for this request: Age 0, and
 * Cache-Status `hypergate; detail=assembled`; `Embed-Status` is there when a part was left out or stale.
 */
export function writeComposite(
  req: IncomingMessage,
  res: HgResponse,
  main: Representation,
  body: string,
  parts: CompositeParts,
  nowMs: number,
  stale: boolean,
): void {
  const etag = compositeEtag(main.contentType, parts);
  // Age 0: it is made now from its parts; Cache-Status (RFC 9211) says it was assembled, not served as one stored answer.
  const headers: (string | number)[] = ['Cache-Control', compositeCacheControl(parts.reps, stale, nowMs), 'ETag', etag, 'Age', 0];
  if (main.vary !== null) headers.push('Vary', main.vary);
  const ifNoneMatch = req.headers['if-none-match'];
  const notModified = ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag);
  // A 200 carries the headers the resource's service exposes (its own answer's, not the parts'), where a plain read puts them; a 304 does not.
  if (!notModified && main.exposed !== null) headers.push(...main.exposed);
  headers.push('Cache-Status', ASSEMBLED);
  if (parts.embedStatus !== '') headers.push('Embed-Status', parts.embedStatus);
  headers.push('X-Request-Id', res.requestId);
  if (notModified) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const length = Buffer.byteLength(body);
  headers.unshift('Content-Type', main.contentType);
  headers.push('Content-Length', length);
  res.writeHead(200, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  res.bytes = length;
  res.end(body);
}
