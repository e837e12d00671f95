import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { HgError } from '../lib/errors.ts';
import { readBody } from '../protocol/body.ts';
import { jsonMediaType, WRITE_BODY_TYPES } from '../lib/media-type.ts';
import { ifUnmodifiedSinceOf, parseIdempotencyKey, parseIfMatch, parseWriteIfNoneMatch } from '../protocol/preconditions.ts';
import type { HgResponse } from '../protocol/response.ts';
import { JSON_INDEX } from '../hypermedia/formats.ts';
import type { ParamType, ParamValue } from './params.ts';
import { checkBody, type FixedField } from './write-body.ts';
import type { CheckedWrite, WriteDeps, WriteMethod, WriteOp } from './write-op.ts';

/** The answer headers that tell a client what a write takes when it sent another media type. */
function unsupported(method: Exclude<WriteMethod, 'DELETE'>): HgError {
  const headers: Record<string, string> =
    method === 'PATCH' ? { 'Accept-Patch': WRITE_BODY_TYPES.PATCH } : method === 'POST' ? { 'Accept-Post': WRITE_BODY_TYPES.POST } : {};
  return new HgError('HG_ERR_UNSUPPORTED_MEDIA_TYPE', { detail: `${method} takes ${WRITE_BODY_TYPES[method]} (UTF-8).`, headers });
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
export function isIdentityCoding(value: string | undefined): boolean {
  if (value === undefined) return true;
  for (const element of value.split(',')) {
    const coding = element.trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') return false;
  }
  return true;
}

/** The body's media type and coding: 415 unless it is the method's JSON type (UTF-8), uncoded. Returns the Content-Type as sent. */
export function checkMediaType(method: Exclude<WriteMethod, 'DELETE'>, headers: IncomingHttpHeaders): string | undefined {
  const type = headers['content-type'];
  if (jsonMediaType(type) !== WRITE_BODY_TYPES[method]) throw unsupported(method);
  if (!isIdentityCoding(headers['content-encoding'])) throw codedBody();
  return type;
}

/**
 * The Idempotency-Key (draft-ietf-httpapi-idempotency-key-header), for the methods that are not
 * idempotent (POST, PATCH): 400 when malformed, or missing on a POST of a resource that requires one.
 */
export function idempotencyKeyOf(op: WriteOp, headers: IncomingHttpHeaders): string | null {
  const { method } = op;
  const rawKey = headers['idempotency-key'];
  const key = method === 'POST' || method === 'PATCH' ? parseIdempotencyKey(typeof rawKey === 'string' ? rawKey : undefined) : null;
  if (key === null && method === 'POST' && op.r.idempotencyRequired) throw new HgError('HG_ERR_IDEMPOTENCY_KEY_MISSING');
  return key;
}

/**
 * Everything that can refuse a write without the upstream, before a byte is read or sent: the
 * route (404), the token, its write scope and the owner rule (401/403), Accept (406), If-Match
 * and If-None-Match (400, 428), the media type and coding (415), Idempotency-Key (400), the body's size (413, while
 * it streams), its JSON (400) and its fields and schema (422). In that order.
 */
export async function checkWrite(op: WriteOp, deps: WriteDeps, req: IncomingMessage, res: HgResponse, path: string): Promise<CheckedWrite> {
  const { r, method, collection } = op;
  const template = collection === null ? r.item : collection.path;
  const types = collection === null ? r.types : collection.types;
  const values: ParamValue[] = [];
  if (!template.match(path, types, values)) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
  const principal = await deps.access.write(req, r, values, collection !== null);
  const format = method === 'DELETE' ? JSON_INDEX : deps.parts.formats.format(req);
  const ifMatch = parseIfMatch(req.headers['if-match']);
  const ifNoneMatch = parseWriteIfNoneMatch(req.headers['if-none-match']);
  // A create-only PUT (If-None-Match: *) cannot overwrite anything: no lost update to prevent.
  const createOnly = method === 'PUT' && ifNoneMatch === '*';
  if (ifMatch === null && !createOnly && r.requireIfMatch && collection === null) throw new HgError('HG_ERR_PRECONDITION_REQUIRED');
  const ifUnmodifiedSince = ifUnmodifiedSinceOf(req.headers['if-unmodified-since'], ifMatch !== null, deps.ctx.clock.now());
  const conditions = { ifMatch, ifNoneMatch, ifUnmodifiedSince };
  if (method === 'DELETE') return { values, principal, format, ...conditions, body: undefined, contentType: undefined, key: null, sentKey: undefined };

  const contentType = checkMediaType(method, req.headers);
  const key = idempotencyKeyOf(op, req.headers);
  const body = await readBody(req, res, deps.ctx.config.server.maxBodyBytes);
  const fixed: FixedField[] = template.params.map((name, i) => ({ name, type: types[i] as ParamType, value: values[i] as ParamValue }));
  if (method === 'POST') fixed.push({ name: r.identityField, type: r.types[r.types.length - 1] as ParamType, value: null });
  checkBody(r, body, method === 'PATCH', fixed, deps.ctx.config.server.maxBodyDepth);
  // As the client sent it (an sf-string, validated above).
  const sentKey = key === null ? undefined : (req.headers['idempotency-key'] as string);
  return { values, principal, format, ...conditions, body, contentType, key, sentKey };
}
