import type { IncomingMessage } from 'node:http';
import { CACHE_STATUS_SLOT_FROM_END, type Representation } from '../cache/representation.ts';
import { checkIfMatch, ifNoneMatchMatches } from '../protocol/conditional.ts';
import type { HgResponse } from '../protocol/response.ts';

/**
 * Writes a representation: 412 when If-Match does not hold, 304 when If-None-Match matches, else
 * 200 (no body for HEAD).
 * `cacheStatus` replaces the hit's RFC 9211 Cache-Status (a miss, a stale answer).
 */
export function writeRepresentation(req: IncomingMessage, res: HgResponse, rep: Representation, nowMs: number, cacheStatus?: string): void {
  const age = rep.ageAt(nowMs);
  const { headers: given } = req;
  const ifMatch = given['if-match'];
  if (ifMatch !== undefined) checkIfMatch(ifMatch, rep.etag);
  const ifNoneMatch = given['if-none-match'];
  const notModified = ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, rep.etag);
  // A shared list (representation.ts): filled here, copied by writeHead before anything else fills it.
  const headers = notModified ? rep.notModifiedHeaders(age) : rep.headers(age);
  if (cacheStatus !== undefined) headers[headers.length - CACHE_STATUS_SLOT_FROM_END] = cacheStatus;
  headers[headers.length - 1] = res.requestId;
  if (notModified) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  if (req.method === 'HEAD') {
    res.writeHead(200, headers);
    res.end();
    return;
  }
  res.bytes = rep.byteLength;
  res.writeHead(200, headers);
  res.end(rep.body, rep.encoding);
}
