import { bodyEtag, upstreamEtagOf } from '../protocol/etag.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { strongIfMatch, type IfMatch } from '../protocol/preconditions.ts';
import { FORMATS, renderBody } from '../hypermedia/formats.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { UpstreamResult, WriteResult } from '../upstream/client.ts';
import type { Resource } from '../hypermedia/resource.ts';
import { itemFromRecord } from './record.ts';
import type { WriteOp, WriteRun } from './write-op.ts';

/** The item as the upstream has it now, read at most once per write, for conditions our ETags cannot carry. */
class CurrentItem {
  readonly #run: WriteRun;
  readonly #call: UpstreamCall;
  #read: Promise<UpstreamResult<Resource>> | null = null;

  constructor(run: WriteRun, call: UpstreamCall) {
    this.#run = run;
    this.#call = call;
  }

  get(): Promise<UpstreamResult<Resource>> {
    const { op, path } = this.#run;
    const { r } = op;
    const { values } = this.#run.checked;
    this.#read ??= r.service.getJson(r.upstream.build(values), this.#call, (json) => itemFromRecord(r, r.record.resolve(json), values, path));
    return this.#read;
  }
}

/** Our ETags of a condition: those of a version the upstream named, turned back into its own tag, and body digests. */
function splitTags(tags: readonly string[], suffixes: readonly string[]): { translated: string[]; digests: string[] } {
  const translated: string[] = [];
  const digests: string[] = [];
  for (const tag of tags) {
    const upstream = suffixes.map((s) => upstreamEtagOf(tag, s)).find((t) => t !== null);
    if (upstream !== undefined && upstream !== null) translated.push(upstream);
    else digests.push(tag);
  }
  return { translated, digests };
}

/** Is one of these digest ETags that of the current item in some format? `weak`: W/ is ignored (RFC 9110 section 8.8.3.2). */
function digestMatches(current: Resource, digests: readonly string[], weak: boolean): boolean {
  const opaque = (tag: string): string => (weak && tag.startsWith('W/') ? tag.slice(2) : tag);
  const rendered = FORMATS.map((format) => bodyEtag(renderBody(current, format)));
  return digests.some((tag) => rendered.includes(opaque(tag)));
}

function preconditionFailed(detail: string): HgError {
  return new HgError('HG_ERR_PRECONDITION_FAILED', { detail });
}

/**
 * If-Match as the upstream must see it. Our ETags of a version the upstream named carry its own
 * validator (etag.ts): they are turned back into it, so the upstream decides atomically (412 when
 * the item changed). A digest ETag (the upstream sent none when it was served, or the item came in
 * a collection page) is compared with the current item, read from the upstream now: when it
 * matches, the upstream's present validator is sent (atomic again), or, when the upstream has no
 * validators at all, nothing (the one case that is not atomic; docs/writes.md "Optimistic concurrency"). A tag that names
 * no current version is a 412 at once, before anything is changed.
 */
async function itemIfMatch(ifMatch: IfMatch, suffixes: readonly string[], current: CurrentItem): Promise<string | undefined> {
  if (ifMatch === '*') return '*';
  const { translated, digests } = splitTags(ifMatch, suffixes);
  if (digests.length === 0) return translated.join(', ');
  const now = await current.get();
  // RFC 9110 section 13.1.1: If-Match is false when there is no current representation.
  if (!now.found) throw new HgError('HG_ERR_PRECONDITION_FAILED');
  if (digestMatches(now.value, digests, false)) return now.etag ?? (translated.length > 0 ? translated.join(', ') : undefined);
  if (translated.length > 0) return translated.join(', ');
  throw new HgError('HG_ERR_PRECONDITION_FAILED');
}

/**
 * If-None-Match as the upstream must see it (RFC 9110 section 13.1.2: on a write, false means
 * 412). `*` (create only) is false when the item exists: the upstream is asked first, and the
 * write is sent with `*` so an upstream that knows the header decides atomically between that
 * read and the write. Tags are compared weakly: ours of an upstream version go on as its own tag;
 * a body digest naming the current item is a 412 before anything is sent.
 */
async function itemIfNoneMatch(ifNoneMatch: IfMatch, suffixes: readonly string[], current: CurrentItem): Promise<string | undefined> {
  if (ifNoneMatch === '*') {
    if ((await current.get()).found) throw preconditionFailed('If-None-Match: * asks for a create only, and this item exists.');
    return '*';
  }
  const { translated, digests } = splitTags(ifNoneMatch, suffixes);
  if (digests.length > 0) {
    const now = await current.get();
    if (now.found && digestMatches(now.value, digests, true)) throw preconditionFailed('If-None-Match names the current representation.');
  }
  return translated.length > 0 ? translated.join(', ') : undefined;
}

/** A condition on a collection (POST) goes on as sent: the collection has no ETag of an upstream version. */
function asSent(condition: IfMatch | null): string | undefined {
  return condition === null ? undefined : condition === '*' ? '*' : condition.join(', ');
}

/**
 * Sends the write upstream: to the item, or (POST) to its collection, with the body byte for byte,
 * If-Match and If-None-Match as the upstream must see them (If-Match's weak tags passed over, as
 * the strong comparison never matches them; a 412 before anything is sent when they cannot hold), If-Unmodified-Since when it applies, and the Idempotency-Key as the client
 * sent it, so the upstream may dedupe too. RFC 9110 section 13.2.2 gives the order: If-Match, then
 * If-None-Match.
 */
export async function sendWrite(run: WriteRun, call: UpstreamCall): Promise<WriteResult> {
  const { r, method, collection, suffixes } = run.op;
  const { ifNoneMatch, ifUnmodifiedSince, values, body, contentType, sentKey } = run.checked;
  const ifMatch = run.checked.ifMatch === null ? null : strongIfMatch(run.checked.ifMatch);
  // Only weak tags: none can match, so nothing is read or sent.
  if (ifMatch === null && run.checked.ifMatch !== null)
    throw new HgError('HG_ERR_PRECONDITION_FAILED', {
      detail: 'If-Match names only weak entity-tags (W/"…"), which never match it (RFC 9110 section 13.1.1).',
    });
  let conditions: { ifMatch: string | undefined; ifNoneMatch: string | undefined };
  if (collection === null) {
    const current = new CurrentItem(run, call);
    const matched = ifMatch === null ? undefined : await itemIfMatch(ifMatch, suffixes, current);
    conditions = { ifMatch: matched, ifNoneMatch: ifNoneMatch === null ? undefined : await itemIfNoneMatch(ifNoneMatch, suffixes, current) };
  } else {
    conditions = { ifMatch: asSent(ifMatch), ifNoneMatch: asSent(ifNoneMatch) };
  }
  const target = collection === null ? r.upstream.build(values) : collection.upstream.build(values);
  return r.service.send(target, call, { method, body, contentType, ...conditions, ifUnmodifiedSince, idempotencyKey: sentKey });
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
      return op.collection === null
        ? op.r.notFound()
        : new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: `${op.r.service.who} has no ${op.r.name} collection at this path.` });
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
      return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', {
        detail: `${op.r.service.who} answered the ${op.method} with status ${result.status}.`,
        log: { service: op.r.service.name, ...result.log },
      });
  }
}
