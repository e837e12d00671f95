import type { HgErrorCode } from '../lib/errors.ts';
import { WRITE_BODY_TYPES } from '../lib/media-type.ts';
import type { JsonSchema, ParamDoc, RouteDoc, WriteAnswerDoc } from '../protocol/route-doc.ts';
import type { Access } from './access.ts';
import type { CompiledCollection, CompiledResource } from './compile.ts';
import { upstreamErrors } from './read-through.ts';
import { schemaName } from './naming.ts';
import { paramRule, paramSchema, type ParamType } from './params.ts';
import type { WriteMethod } from './write-op.ts';

/**
 * The body a write takes when the resource declares no JSON Schema: an object of its declared
 * fields (their types where `fieldTypes` says), nothing else. POST and PUT replace the whole
 * representation, so the declared `fields` are required, except those the path gives (`fixed`:
 * they may be sent, equal to the path's) and, for POST, the new item's identifier, which the
 * upstream assigns and the gateway refuses. A merge patch (RFC 7396) requires nothing, and each
 * field may also be null, which removes it.
 */
function declaredBody(r: CompiledResource, method: Exclude<WriteMethod, 'DELETE'>, fixed: readonly string[]): JsonSchema {
  const patch = method === 'PATCH';
  const properties: Record<string, JsonSchema> = {};
  for (const field of [...r.fields, ...r.exposeFields]) {
    // A read-only field is refused in any write (write-body.ts): not a property a body may have.
    if ((method === 'POST' && field === r.identityField) || r.readOnlyFields.has(field)) continue;
    const type = r.fieldTypes[field];
    const base: JsonSchema = field === r.identityField ? paramSchema(r.types[r.types.length - 1] as ParamType) : type === undefined ? {} : { type };
    properties[field] = patch ? { anyOf: [base, { type: 'null' }] } : base;
  }
  const required = patch ? [] : r.fields.filter((f) => f !== r.identityField && !fixed.includes(f) && !r.readOnlyFields.has(f));
  return { type: 'object', ...(required.length > 0 ? { required } : {}), properties, additionalProperties: false };
}

/** The conditional request headers a write takes, besides If-Match. */
function writeConditions(r: CompiledResource, method: WriteMethod): ParamDoc[] {
  const createOnly = method === 'PUT' ? ` "*" creates only: 412 when the ${r.singular} exists (it then stands in for If-Match).` : '';
  return [
    {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: `"*" or ETags: 412 when the ${method === 'POST' ? 'collection' : r.singular} has a current representation it names (RFC 9110 section 13.1.2).${createOnly}`,
      schema: { type: 'string' },
    },
    {
      name: 'If-Unmodified-Since',
      in: 'header',
      required: false,
      description:
        'An HTTP-date, passed on to the upstream service, which holds the modification date (412 when modified since); ignored with If-Match (RFC 9110 section 13.1.4).',
      schema: { type: 'string' },
    },
  ];
}

const VERB: Readonly<Record<WriteMethod, string>> = { POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete' };

/** The route doc of one write: what it takes, what it answers and every problem it may give. */
export function writeDocs(r: CompiledResource, method: WriteMethod, collection: CompiledCollection | null, access: Access): RouteDoc {
  const template = collection === null ? r.item : collection.path;
  const types = collection === null ? r.types : collection.types;
  const params: ParamDoc[] = template.params.map((name, i) => ({
    name,
    in: 'path',
    required: true,
    description: `${name === r.identityField && collection === null ? `The ${r.singular}'s identifier` : `Path parameter ${name}`}. ${paramRule(types[i] as ParamType)}`,
    schema: paramSchema(types[i] as ParamType),
  }));
  if (method !== 'POST') {
    const required = r.requireIfMatch && method !== 'PUT';
    params.push({
      name: 'If-Match',
      in: 'header',
      required,
      description: `The ETag of the representation the change is based on (RFC 9110 section 13.1.1); 412 when the ${r.singular} changed since.${r.requireIfMatch ? ` Without it${method === 'PUT' ? ' (or If-None-Match: *)' : ''}: 428.` : ''}`,
      schema: { type: 'string' },
    });
  }
  params.push(...writeConditions(r, method));
  if (method === 'POST' || method === 'PATCH') {
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: method === 'POST' && r.idempotencyRequired,
      description:
        'A quoted string (draft-ietf-httpapi-idempotency-key-header): the same key and body again replays the first answer; another body is 422; while the first runs, 409.',
      schema: { type: 'string' },
    });
  }
  const body =
    method === 'DELETE'
      ? null
      : { mediaType: WRITE_BODY_TYPES[method], schema: r.schema === null ? declaredBody(r, method, template.params) : r.schema.schema };
  const represented = `The ${r.singular} as the upstream has it now, rendered as a GET would (in the negotiated format).`;
  const answers: WriteAnswerDoc[] =
    method === 'POST'
      ? [{ status: 201, description: `Created. ${represented}`, headers: ['Location', 'ETag', 'Content-Location'] }]
      : method === 'DELETE'
        ? [{ status: 204, description: 'Deleted.', headers: [] }]
        : [
            { status: 200, description: `Changed. ${represented}`, headers: ['ETag', 'Content-Location'] },
            { status: 201, description: `Created by the upstream. ${represented}`, headers: ['Location', 'ETag', 'Content-Location'] },
            { status: 204, description: 'Changed; the upstream answered without a representation.', headers: [] },
          ];
  // 412 and 428 may come from the upstream too, for a POST as for the rest.
  const errors: HgErrorCode[] = [
    'HG_ERR_ROUTE_NOT_FOUND',
    'HG_ERR_BAD_REQUEST',
    'HG_ERR_CONFLICT',
    'HG_ERR_UNPROCESSABLE',
    'HG_ERR_PRECONDITION_FAILED',
    'HG_ERR_PRECONDITION_REQUIRED',
    ...upstreamErrors(r.service),
  ];
  if (collection === null) errors.push('HG_ERR_RESOURCE_NOT_FOUND');
  if (method !== 'DELETE') errors.push('HG_ERR_UNSUPPORTED_MEDIA_TYPE', 'HG_ERR_UNSUPPORTED_TRANSFER_CODING', 'HG_ERR_INVALID_BODY');
  if (method === 'POST' || method === 'PATCH') errors.push('HG_ERR_IDEMPOTENCY_KEY_MISSING', 'HG_ERR_IDEMPOTENCY_KEY_IN_USE', 'HG_ERR_IDEMPOTENCY_KEY_REUSED');
  if (r.owner !== null) errors.push('HG_ERR_NOT_OWNER');
  const item = schemaName(r.singular);
  const onCollection = collection !== null && r.owner !== null && collection.ownerParam === -1;
  return {
    operationId: `${VERB[method]}${item}`,
    summary: `${VERB[method].charAt(0).toUpperCase()}${VERB[method].slice(1)} ${method === 'POST' ? `a ${r.singular}` : `one ${r.singular}`}`,
    description: `${method} ${template.text} → ${method} on the upstream service. Needs the scope ${r.writeScope}${onCollection ? ' and auth.readAnyScope' : ''}; the cache drops the ${r.singular}, its collection's pages${method === 'DELETE' ? ' and what lies below it' : ''} on every change.`,
    params,
    scopes: onCollection ? [r.writeScope, ...access.scopesOf(r, true).slice(1)] : [r.writeScope],
    ok: { description: represented, content: { 'application/json': item, 'application/hal+json': `${item}Hal` } },
    errors,
    notFound: r.notFound().identity,
    write: { body, answers },
  };
}
