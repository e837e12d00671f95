import { variantsGroup } from './identity.ts';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { IdempotentAnswer } from '../cluster/idempotency.ts';
import { HgError } from '../lib/errors.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { WriteResult } from '../upstream/client.ts';
import { itemFromRecord, memberFromRecord } from './record.ts';
import type { WriteRun } from './write-op.ts';

/**
 * Drops what a write (or one whose outcome is unknown) makes stale: the item in every format, its
 * collection's pages, and for DELETE what lies below it; for a POST, the collection's pages.
 */
export function invalidateAfter(run: WriteRun): void {
  const { r, collection, method } = run.op;
  const { values } = run.checked;
  if (collection === null) {
    const { keys, groups } = r.invalidation(run.path, values, method === 'DELETE');
    tell(run, keys, groups);
  } else {
    tell(run, [], [collection.pagesGroup(values)]);
  }
}

/** One invalidation of this write, its broadcast kept for the answer to wait for. */
function tell(run: WriteRun, keys: readonly string[], groups: readonly string[]): void {
  run.published.push(run.deps.invalidate(keys, groups));
}

/**
 * The upstream accepted the write for later (202, RFC 9110 section 15.3.3): nothing is made yet,
 * so nothing is stored as the item and no Location is given; what the cache holds may change
 * at any moment, so it is dropped. Final under an Idempotency-Key (a retry would submit it again).
 */
export function accepted(run: WriteRun): IdempotentAnswer {
  invalidateAfter(run);
  return { status: 202, headers: { 'Cache-Control': 'no-store' }, body: '' };
}

/**
 * A 2xx from the upstream: the cache is told, and the answer rendered. A record in the answer is
 * rendered as a GET would render it (fields, links, the negotiated format, the ETag a GET of it
 * will carry) and stored, unless another change of the item overtook this one while it ran
 * (`ticket`: the cache's load ticket taken before the write was sent).
 * DELETE answers 204; a POST 201 with Location; PUT and PATCH 200 (201 when the upstream created
 * the item); an answer without a record, 204 (a POST must carry one: 502).
 */
export function answered(run: WriteRun, result: WriteResult, ticket: number): IdempotentAnswer {
  const { op, deps, path } = run;
  const { r, method, collection } = op;
  const { values, format } = run.checked;
  const { ctx } = deps;
  const { entries } = deps.parts;
  // Another write or a purge of the item while this one ran: this answer may be older than what is
  // there now, so it is not stored (asked before this write's own invalidation below).
  const overtaken = (itemPath: string, groups: readonly string[]): boolean => ctx.cache.invalidatedSince(itemPath, groups, ticket);
  const raced = collection === null && overtaken(path, r.groups(values));
  // The change is made: the cache is told before anything else can fail.
  invalidateAfter(run);
  if (method === 'DELETE' || result.json === undefined) {
    if (method === 'POST')
      throw new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', {
        detail: `${r.service.who} answered the POST without the created ${r.singular}.`,
        log: { service: r.service.name },
      });
    return { status: 204, headers: {}, body: '' };
  }
  let itemPath = path;
  let itemValues = values;
  let resource: Resource;
  let stale = raced;
  if (collection !== null) {
    const member = memberFromRecord(r, collection, r.record.resolve(result.json), values);
    itemPath = member.path;
    itemValues = member.values;
    resource = member.resource;
    stale = overtaken(itemPath, r.groups(itemValues));
    // A remembered 404 of the new item's path must not outlive its creation.
    tell(run, [itemPath], r.vary === null ? [] : [variantsGroup(itemPath)]);
  } else {
    resource = itemFromRecord(r, r.record.resolve(result.json), values, path);
  }
  const freshness = entries.upstreamFreshness({ freshness: result.freshness, ageSeconds: 0 }, r.maxAgeSeconds);
  const validator = result.etag === null ? null : { upstream: result.etag, suffixes: op.suffixes };
  const entry: CacheEntry = entries.entry(resource, { freshness, groups: r.groups(itemValues), embeddedRel: null, validator });
  // A resource that varies keys its entries by identity (identity.ts): the write dropped them all, the next read of each identity loads its own.
  if (!stale && r.vary === null && entries.storable(freshness)) ctx.cache.set(itemPath, entry);
  const rep = entries.variantOf(entry, format);
  const created = method === 'POST' || result.status === 201;
  const headers: Record<string, string> = {
    'Content-Type': rep.contentType,
    ETag: rep.etag,
    // RFC 9110 section 8.7: the body is a representation of this resource.
    'Content-Location': itemPath,
    'Cache-Control': 'no-store',
    Vary: entries.varyOf(r),
  };
  if (created) headers['Location'] = itemPath;
  return { status: created ? 201 : 200, headers, body: rep.body };
}

/** Writes a stored or fresh final answer (status, its describing headers, body) with this request's id. */
export function writeAnswer(res: HgResponse, answer: IdempotentAnswer): void {
  const headers: (string | number)[] = [];
  for (const [name, value] of Object.entries(answer.headers)) headers.push(name, value);
  const body = Buffer.from(answer.body);
  if (answer.status !== 204) headers.push('Content-Length', body.length);
  headers.push('X-Request-Id', res.requestId);
  res.bytes = answer.status === 204 ? 0 : body.length;
  res.writeHead(answer.status, headers);
  res.end(answer.status === 204 ? undefined : body);
}
