import { bodyEtag, upstreamEtagOf } from '../protocol/etag.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { strongIfMatch, type IfMatch } from '../protocol/preconditions.ts';
import { FORMATS, renderBody } from '../hypermedia/formats.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { WriteResult } from '../upstream/client.ts';
import { itemFromRecord } from './record.ts';
import type { WriteOp, WriteRun } from './write-op.ts';

/**
 * If-Match as the upstream must see it. Our ETags of a version the upstream named carry its own
 * validator (etag.ts): they are turned back into it, so the upstream decides atomically (412 when
 * the item changed). A digest ETag (the upstream sent none when it was served, or the item came in
 * a collection page) is compared with the current item, read from the upstream now: when it
 * matches, the upstream's present validator is sent (atomic again), or, when the upstream has no
 * validators at all, nothing (the one case that is not atomic; README "Writes"). A tag that names
 * no current version is a 412 at once, before anything is changed.
 */
async function itemCondition(run: WriteRun, ifMatch: IfMatch, call: UpstreamCall): Promise<string | undefined> {
  if (ifMatch === '*') return '*';
  const { op, path } = run;
  const { values } = run.checked;
  const translated: string[] = [];
  const digests: string[] = [];
  for (const tag of ifMatch) {
    const upstream = op.suffixes.map((s) => upstreamEtagOf(tag, s)).find((t) => t !== null);
    if (upstream !== undefined && upstream !== null) translated.push(upstream);
    else digests.push(tag);
  }
  if (digests.length === 0) return translated.join(', ');
  const { r } = op;
  const current = await r.service.getJson(r.upstream.build(values), call, (json) => itemFromRecord(r, r.record.resolve(json), values, path));
  // RFC 9110 section 13.1.1: If-Match is false when there is no current representation.
  if (!current.found) throw new HgError('HG_ERR_PRECONDITION_FAILED');
  const matches = digests.some((tag) => FORMATS.some((format) => bodyEtag(renderBody(current.value, format)) === tag));
  if (matches) return current.etag ?? (translated.length > 0 ? translated.join(', ') : undefined);
  if (translated.length > 0) return translated.join(', ');
  throw new HgError('HG_ERR_PRECONDITION_FAILED');
}

/**
 * Sends the write upstream: to the item, or (POST) to its collection, with the body byte for byte,
 * If-Match as the upstream must see it (weak tags passed over, as the strong comparison never
 * matches them; a 412 before anything is sent when it names no current version) and the Idempotency-Key as the client sent it, so the upstream may dedupe too.
 */
export async function sendWrite(run: WriteRun, call: UpstreamCall): Promise<WriteResult> {
  const { r, method, collection } = run.op;
  const { values, body, contentType, sentKey } = run.checked;
  const ifMatch = run.checked.ifMatch === null ? null : strongIfMatch(run.checked.ifMatch);
  // Only weak tags: none can match, so nothing is read or sent.
  if (ifMatch === null && run.checked.ifMatch !== null) throw new HgError('HG_ERR_PRECONDITION_FAILED', { detail: 'If-Match names only weak entity-tags (W/"…"), which never match it (RFC 9110 section 13.1.1).' });
  const condition = ifMatch === null ? undefined : collection === null ? await itemCondition(run, ifMatch, call) : ifMatch === '*' ? '*' : ifMatch.join(', ');
  const target = collection === null ? r.upstream.build(values) : collection.upstream.build(values);
  return r.service.send(target, call, { method, body, contentType, ifMatch: condition, idempotencyKey: sentKey });
}

/** A safe excerpt of the upstream's own problem detail (RFC 9457), shown only when it sent application/problem+json. */
function upstreamDetail(result: WriteResult): string | undefined {
  if (!result.problem || typeof result.json !== 'object' || result.json === null) return undefined;
  const detail = (result.json as Record<string, unknown>)['detail'];
  if (typeof detail !== 'string') return undefined;
  const clean = detail.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return clean === '' ? undefined : clean.slice(0, 500);
}

/**
 * The upstream refused or failed the write: the problem a client gets. 404 → the resource's own
 * not-found problem, 409 → 409, 412 → 412, 428 → 428, 400/422 → 422 (carrying the upstream's own
 * detail only when it answered application/problem+json), anything else → 502.
 */
export function refusal(op: WriteOp, result: WriteResult): HgError {
  const detail = upstreamDetail(result);
  const withDetail = (code: HgErrorCode): HgError => new HgError(code, detail === undefined ? {} : { detail });
  switch (result.status) {
    case 404:
      return op.collection === null ? op.r.notFound() : new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: `${op.r.service.who} has no ${op.r.name} collection at this path.` });
    case 409:
      return withDetail('HG_ERR_CONFLICT');
    case 412:
      return new HgError('HG_ERR_PRECONDITION_FAILED');
    case 428:
      return new HgError('HG_ERR_PRECONDITION_REQUIRED', { detail: `${op.r.service.who} changes this ${op.r.singular} only with If-Match.` });
    case 400:
    case 422:
      return withDetail('HG_ERR_UNPROCESSABLE');
    default:
      return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `${op.r.service.who} answered the ${op.method} with status ${result.status}.` });
  }
}
