import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { bodyEtag, upstreamEtagOf } from '../protocol/etag.ts';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { GatewayContext } from '../gateway/context.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { discardBody, readBody } from '../http/body.ts';
import { jsonMediaType, WRITE_BODY_TYPES } from '../lib/media-type.ts';
import { parseIdempotencyKey, parseIfMatch, type IfMatch } from '../protocol/preconditions.ts';
import { problemBody } from '../protocol/problem.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { RouteDef, RouteMethod } from '../http/router.ts';
import { callOf } from '../upstream/trace-context.ts';
import { FORMATS, JSON_INDEX, renderBody } from '../hypermedia/formats.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { WriteResult } from '../upstream/client.ts';
import type { Access } from './access.ts';
import type { CompiledCollection, CompiledResource, ResourceTable } from './compile.ts';
import type { IdempotencyStore, IdempotentAnswer } from '../cluster/idempotency.ts';
import type { ResourceKit } from './kit.ts';
import type { ParamType, ParamValue } from './params.ts';
import { suffixesOf } from './read-routes.ts';
import { itemFromRecord, memberFromRecord } from './record.ts';
import { checkBody, type FixedField } from './write-body.ts';
import { writeDocs } from './write-docs.ts';

type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const BODY_TYPES = WRITE_BODY_TYPES;

/** The answer headers that tell a client what a write takes when it sent another media type. */
function unsupported(method: Exclude<WriteMethod, 'DELETE'>): HgError {
  const headers: Record<string, string> =
    method === 'PATCH' ? { 'Accept-Patch': BODY_TYPES.PATCH } : method === 'POST' ? { 'Accept-Post': BODY_TYPES.POST } : {};
  return new HgError('HG_ERR_UNSUPPORTED_MEDIA_TYPE', { detail: `${method} takes ${BODY_TYPES[method]} (UTF-8).`, headers });
}

/**
 * A body in a content coding (gzip, br, ...) would be checked as JSON and sent upstream as the
 * bytes it is, without its coding: RFC 9110 section 15.5.16 makes it a 415, and Accept-Encoding
 * in the answer (section 12.5.3) says the body must come uncoded.
 */
function codedBody(): HgError {
  return new HgError('HG_ERR_UNSUPPORTED_MEDIA_TYPE', {
    detail: 'The body must not be in a content coding (Content-Encoding): send it as it is.',
    headers: { 'Accept-Encoding': 'identity' },
  });
}

/**
 * No Content-Encoding, or a list naming only `identity` (RFC 9110 section 8.4.1: no coding).
 * The field is a list (`#content-coding`): repeated fields arrive joined with commas, and empty
 * elements must be ignored (section 5.6.1.2), so `identity, identity` and an empty value are no
 * coding either.
 */
function isIdentityCoding(value: string | undefined): boolean {
  if (value === undefined) return true;
  for (const element of value.split(',')) {
    const coding = element.trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') return false;
  }
  return true;
}

/** What writes need besides the kit and the access rules. */
export interface WriteDeps {
  readonly ctx: GatewayContext;
  readonly kit: ResourceKit;
  readonly access: Access;
  readonly idempotency: IdempotencyStore;
  /**
   * The one invalidation operation: drops these keys and groups here (and, with shared state,
   * on every instance). Writes call it after the upstream changed (or may have changed) the item.
   */
  readonly invalidate: (keys: readonly string[], groups: readonly string[]) => void;
}

/** One write route: the resource, the method, and whether it acts on the collection (POST) or an item. */
interface WriteOp {
  readonly r: CompiledResource;
  readonly method: WriteMethod;
  /** The collection for POST, null for PUT, PATCH, DELETE (they act on an item). */
  readonly collection: CompiledCollection | null;
  /** The render suffixes of the resource's formats (for ETags derived from the upstream's). */
  readonly suffixes: readonly string[];
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
function refusal(op: WriteOp, result: WriteResult): HgError {
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

/** Upstream answers whose outcome is known (replayed under an Idempotency-Key): the change happened, or was refused. */
const DEFINITE = new Set([404, 409, 412, 422, 428, 400]);

/**
 * If-Match as the upstream must see it. Our ETags of a version the upstream named carry its own
 * validator (etag.ts): they are turned back into it, so the upstream decides atomically (412 when
 * the item changed). A digest ETag (the upstream sent none when it was served, or the item came in
 * a collection page) is compared with the current item, read from the upstream now: when it
 * matches, the upstream's present validator is sent (atomic again), or, when the upstream has no
 * validators at all, nothing (the one case that is not atomic; README "Writes"). A tag that names
 * no current version is a 412 at once, before anything is changed.
 */
async function upstreamIfMatch(op: WriteOp, ifMatch: IfMatch, path: string, values: readonly ParamValue[], call: UpstreamCall): Promise<string | undefined> {
  if (ifMatch === '*') return '*';
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

/** The request a key was first used for: method, path and the exact body bytes. */
function fingerprintOf(method: string, path: string, body: Buffer | undefined): string {
  const hash = createHash('sha256').update(`${method} ${path}\n`);
  if (body !== undefined) hash.update(body);
  return hash.digest('base64url');
}

/** Who an Idempotency-Key belongs to: the token's subject, or (no `sub`) the token itself. */
function idempotencyScope(req: IncomingMessage, subject: string | undefined): string {
  if (subject !== undefined) return `sub:${subject}`;
  return `token:${createHash('sha256').update(req.headers.authorization ?? '').digest('base64url')}`;
}

/** Writes a stored or fresh final answer (status, its describing headers, body) with this request's id. */
function writeAnswer(res: HgResponse, answer: IdempotentAnswer): void {
  const headers: (string | number)[] = [];
  for (const [name, value] of Object.entries(answer.headers)) headers.push(name, value);
  const body = Buffer.from(answer.body);
  if (answer.status !== 204) headers.push('Content-Length', body.length);
  headers.push('X-Request-Id', res.requestId);
  res.bytes = answer.status === 204 ? 0 : body.length;
  res.writeHead(answer.status, headers);
  res.end(answer.status === 204 ? undefined : body);
}

/** A problem as a final answer to keep (the upstream's definite refusal under an Idempotency-Key). */
function problemAnswer(err: HgError): IdempotentAnswer {
  return { status: err.status, headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store', ...err.headers }, body: JSON.stringify(problemBody(err)) };
}

/**
 * A write of one declared resource, start to end. Everything that can refuse it without the
 * upstream does so first, before a byte is read or sent: the route (404), the token, its write
 * scope and the owner rule (401/403), Accept (406), If-Match (400, 428), the media type and coding (415),
 * Idempotency-Key (400), the body's size (413, while it streams), its JSON (400) and its fields and
 * schema (422). Then a known Idempotency-Key replays its answer (or 409/422), and the write goes
 * upstream. Whatever the upstream then did (or may have done), the cache is told: the item in every
 * format, its collection's pages and, for DELETE, what lies below it are dropped, and the new
 * representation an answer carries is stored unless a later change overtook this one.
 */
async function write(op: WriteOp, deps: WriteDeps, req: IncomingMessage, res: HgResponse, path: string): Promise<void> {
  try {
    await refusedOrWritten(op, deps, req, res, path);
  } catch (err) {
    // Refused before the body was read whole: drop the rest as it comes, so the answer reaches the client.
    discardBody(req);
    throw err;
  }
}

async function refusedOrWritten(op: WriteOp, deps: WriteDeps, req: IncomingMessage, res: HgResponse, path: string): Promise<void> {
  const { r, method, collection } = op;
  const { kit, ctx } = deps;
  const template = collection === null ? r.item : collection.path;
  const types = collection === null ? r.types : collection.types;
  const values: ParamValue[] = [];
  if (!template.match(path, types, values)) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
  const principal = await deps.access.write(req, r, values, collection !== null);
  const format = method === 'DELETE' ? JSON_INDEX : kit.format(req);
  const ifMatch = parseIfMatch(req.headers['if-match']);
  if (ifMatch === null && r.requireIfMatch && collection === null) throw new HgError('HG_ERR_PRECONDITION_REQUIRED');

  let body: Buffer | undefined;
  let contentType: string | undefined;
  let key: string | null = null;
  if (method !== 'DELETE') {
    const type = req.headers['content-type'];
    if (jsonMediaType(type) !== BODY_TYPES[method]) throw unsupported(method);
    if (!isIdentityCoding(req.headers['content-encoding'])) throw codedBody();
    contentType = type;
    // draft-ietf-httpapi-idempotency-key-header: for the methods that are not idempotent.
    const rawKey = req.headers['idempotency-key'];
    if (method === 'POST' || method === 'PATCH') key = parseIdempotencyKey(typeof rawKey === 'string' ? rawKey : undefined);
    if (key === null && method === 'POST' && r.idempotencyRequired) throw new HgError('HG_ERR_IDEMPOTENCY_KEY_MISSING');
    body = await readBody(req, res, ctx.config.server.maxBodyBytes);
    const fixed: FixedField[] = template.params.map((name, i) => ({ name, type: types[i] as ParamType, value: values[i] as ParamValue }));
    checkBody(r, body, method === 'PATCH', fixed);
  }

  const call = callOf(req, res.requestId, principal.claims);
  const scope = key === null ? null : idempotencyScope(req, principal.subject);
  const fingerprint = key === null ? '' : fingerprintOf(method, path, body);
  const ttlSeconds = ctx.config.idempotency.ttlSeconds;
  // Whether this request holds the key's record ('new'), may hold it ('unavailable': the shared store
  // did not answer in time, and its claim may yet have been made there; the write goes on
  // unprotected rather than fail, README "Writes"), or has none.
  let claim: 'new' | 'unavailable' | null = null;
  if (scope !== null && key !== null) {
    const begun = await deps.idempotency.begin(scope, key, fingerprint, ttlSeconds);
    if (begun.state === 'completed') return writeAnswer(res, begun.answer);
    if (begun.state === 'in-progress') throw new HgError('HG_ERR_IDEMPOTENCY_KEY_IN_USE');
    if (begun.state === 'mismatch') throw new HgError('HG_ERR_IDEMPOTENCY_KEY_REUSED');
    if (begun.state === 'unavailable') ctx.logger.warn('idempotency records unavailable: the write goes on without one', { reqId: res.requestId, event: 'idempotency' });
    claim = begun.state;
  }
  const finish = (answer: IdempotentAnswer | null): void => {
    if (claim === null || scope === null || key === null) return;
    // An answer whose outcome is unknown (a time-out, a reset, a 5xx) is not final: a retry runs
    // again, so our claim is dropped; one we only may have made is left to its lease, as dropping
    // it could drop another request's. A final answer is kept in both cases: a claim that reached
    // Redis late would otherwise hold the key "in progress" (409) and then lapse, letting a retry
    // make the change twice; with no claim there, it is stored all the same (unless the key
    // already holds a final answer, or a record of another request body).
    // Keeping the record is best effort and is not waited for: a store that fails or is slow (Redis
    // may take 10 × redis.timeoutMs) never changes or delays the answer. It is asked before the
    // answer is written, so a retry that follows the answer finds the record.
    if (answer !== null) deps.idempotency.complete(scope, key, fingerprint, answer, ttlSeconds).catch(() => {});
    else if (claim === 'new') deps.idempotency.abandon(scope, key, fingerprint).catch(() => {});
  };

  const ticket = ctx.cache.beginLoad();
  try {
    let result: WriteResult;
    try {
      const condition = ifMatch === null ? undefined : collection === null ? await upstreamIfMatch(op, ifMatch, path, values, call) : ifMatch === '*' ? '*' : ifMatch.join(', ');
      result = await r.service.send(collection === null ? r.upstream.build(values) : collection.upstream.build(values), call, {
        method,
        body,
        contentType,
        ifMatch: condition,
        // As the client sent it (an sf-string, validated above), so the upstream may dedupe too.
        idempotencyKey: key === null ? undefined : (req.headers['idempotency-key'] as string),
      });
    } catch (err) {
      // If-Match named no current version: decided before anything was sent, and final.
      if (err instanceof HgError && err.code === 'HG_ERR_PRECONDITION_FAILED') {
        finish(problemAnswer(err));
        throw err;
      }
      // An open breaker sent nothing; anything else may have reached the upstream: what the cache
      // holds of the item may be stale, and the outcome is unknown.
      if (!(err instanceof HgError && err.code === 'HG_ERR_UPSTREAM_UNAVAILABLE')) invalidateAfter(op, deps, path, values);
      finish(null);
      throw err;
    }
    if (result.status < 200 || result.status >= 300) {
      const refused = refusal(op, result);
      // A 404 says the item is gone; a 5xx may have changed it: both drop what the cache holds.
      if (result.status === 404 || result.status >= 500) invalidateAfter(op, deps, path, values);
      finish(DEFINITE.has(result.status) ? problemAnswer(refused) : null);
      throw refused;
    }
    let answer: IdempotentAnswer;
    try {
      answer = answered(op, deps, result, path, values, format, ticket);
    } catch (err) {
      // The upstream made the change (a 2xx) but its answer cannot be rendered (no record, an
      // invalid one): the outcome is known, so the 502 is final. A retry that ran again would make
      // the change twice, which is what the key is for.
      finish(err instanceof HgError ? problemAnswer(err) : null);
      throw err;
    }
    finish(answer);
    writeAnswer(res, answer);
  } finally {
    ctx.cache.endLoad(ticket);
  }
}

/**
 * Drops what a write (or one whose outcome is unknown) makes stale: the item in every format, its
 * collection's pages, and for DELETE what lies below it; for a POST, the collection's pages.
 */
function invalidateAfter(op: WriteOp, deps: WriteDeps, path: string, values: readonly ParamValue[]): void {
  const { r, collection } = op;
  if (collection === null) {
    const { keys, groups } = r.invalidation(path, values, op.method === 'DELETE');
    deps.invalidate(keys, groups);
  } else {
    deps.invalidate([], [collection.pagesGroup(values)]);
  }
}

/**
 * A 2xx from the upstream: the cache is told, and the answer rendered. A record in the answer is
 * rendered as a GET would render it (fields, links, the negotiated format, the ETag a GET of it
 * will carry) and stored, unless another change of the item overtook this one while it ran.
 * DELETE answers 204; a POST 201 with Location; PUT and PATCH 200 (201 when the upstream created
 * the item); an answer without a record, 204 (a POST must carry one: 502).
 */
function answered(op: WriteOp, deps: WriteDeps, result: WriteResult, path: string, values: readonly ParamValue[], format: number, ticket: number): IdempotentAnswer {
  const { r, method, collection } = op;
  const { kit, ctx } = deps;
  // Another write or a purge of the item while this one ran: this answer may be older than what is
  // there now, so it is not stored (asked before this write's own invalidation below).
  const overtaken = (itemPath: string, groups: readonly string[]): boolean => ctx.cache.invalidatedSince(itemPath, groups, ticket);
  const raced = collection === null && overtaken(path, r.groups(values));
  // The change is made: the cache is told before anything else can fail.
  invalidateAfter(op, deps, path, values);
  if (method === 'DELETE' || result.json === undefined) {
    if (method === 'POST') throw new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `${r.service.who} answered the POST without the created ${r.singular}.` });
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
    deps.invalidate([itemPath], []);
  } else {
    resource = itemFromRecord(r, r.record.resolve(result.json), values, path);
  }
  const freshness = kit.upstreamFreshness({ freshness: result.freshness, ageSeconds: 0 }, r.maxAgeSeconds);
  const validator = result.etag === null ? null : { upstream: result.etag, suffixes: op.suffixes };
  const entry: CacheEntry = kit.entry(resource, { freshness, groups: r.groups(itemValues), embeddedRel: null, validator });
  if (!stale && kit.storable(freshness)) ctx.cache.set(itemPath, entry);
  const rep = kit.variantOf(entry, format);
  const created = method === 'POST' || result.status === 201;
  const headers: Record<string, string> = {
    'Content-Type': rep.contentType,
    ETag: rep.etag,
    // RFC 9110 section 8.7: the body is a representation of this resource.
    'Content-Location': itemPath,
    'Cache-Control': 'no-store',
    Vary: kit.vary,
  };
  if (created) headers['Location'] = itemPath;
  return { status: created ? 201 : 200, headers, body: rep.body };
}

/** The write routes of the table: POST on each collection that takes it, PUT/PATCH/DELETE on each item that does. */
export function writeRoutes(table: ResourceTable, deps: WriteDeps): RouteDef[] {
  const routes: RouteDef[] = [];
  for (const r of table.resources) {
    const suffixes = suffixesOf(r, deps.kit);
    const add = (method: WriteMethod, collection: CompiledCollection | null): void => {
      const op: WriteOp = { r, method, collection, suffixes };
      const template = collection === null ? r.item : collection.path;
      const types = collection === null ? r.types : collection.types;
      routes.push({
        method: method as RouteMethod,
        path: template.route,
        fits: (path) => template.fits(path, types),
        handler: (req, res, path) => write(op, deps, req, res, path),
        acceptsBody: method !== 'DELETE',
        doc: writeDocs(r, method, collection, deps.access),
      });
    };
    if (r.methods.has('POST') && r.collection !== null) add('POST', r.collection);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) if (r.methods.has(method)) add(method, null);
  }
  return routes;
}
