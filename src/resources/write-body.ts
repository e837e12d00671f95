import { TextDecoder } from 'node:util';
import { HgError, type FieldError } from '../lib/errors.ts';
import type { CompiledResource } from './compile.ts';
import { jsonTextProblem, pointerToken, type JsonTextProblem } from './json-text.ts';
import { paramFromValue, type ParamType, type ParamValue } from './params.ts';

/**
 * Strict UTF-8 (RFC 8259 section 8.1): an invalid sequence is a malformed body, not U+FFFD. A byte
 * order mark is kept (`ignoreBOM`), so JSON.parse refuses it: the upstream gets the body's bytes as
 * they came, and a body checked without its BOM would be sent with it.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function startsWithBom(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * A field the body may name but not change: a path parameter, with its type and the request's
 * value; or, `value` null, a POST's new identifier, which the upstream assigns (it must be absent).
 */
export interface FixedField {
  readonly name: string;
  readonly type: ParamType;
  readonly value: ParamValue | null;
}

function unprocessable(errors: FieldError[]): HgError {
  const named = errors.map((e) => (e.pointer === '' || e.pointer === '/' ? e.detail : `${e.pointer.slice(1)} ${e.detail}`));
  // RFC 9457 section 3.2: the failing fields as an extension member, each with a JSON pointer into the body.
  const list = named.join('; ');
  return new HgError('HG_ERR_UNPROCESSABLE', {
    detail: `The request body cannot be applied: ${list.endsWith('.') ? list : `${list}.`}`,
    extensions: { errors: errors.map((e) => ({ pointer: e.pointer, detail: e.detail })) },
  });
}

/** The pointer of a top-level member, for field errors. */
function pointerTo(name: string): string {
  return `/${pointerToken(name)}`;
}

/** What a 422 says of a member name given twice, or of a string that is no Unicode text. */
const TEXT_PROBLEM_DETAIL: Readonly<Record<Exclude<JsonTextProblem['kind'], 'depth'>, string>> = {
  duplicate: 'is given twice in one object (RFC 7493 section 2.3): the upstream might apply the other value',
  surrogate: 'holds a lone surrogate (an escape such as \\ud800 that is half of a pair), which is no Unicode character (RFC 7493 section 2.1)',
};

/**
 * Checks a write's body before anything is sent: JSON (else 400) nested at most `maxDepth` levels
 * (server.maxBodyDepth; else 400), an object (else 422) whose members are named once and whose
 * strings are Unicode text (I-JSON; else 422), only the fields the resource exposes (`fields`,
 * `exposeFields`) and none of its `readOnlyFields`, path parameters' fields unchanged (a POST's new identifier absent), and the resource's JSON Schema when it has
 * one (`patch`: the merge-patch form, RFC 7396). Every failing field is listed in one 422. The
 * parsed object is returned; the bytes sent upstream are the caller's, unchanged.
 */
export function checkBody(r: CompiledResource, bytes: Buffer, patch: boolean, fixed: readonly FixedField[], maxDepth: number): Record<string, unknown> {
  let value: unknown;
  let text: string;
  try {
    text = utf8.decode(bytes);
    value = JSON.parse(text);
  } catch {
    const detail = startsWithBom(bytes)
      ? 'The request body starts with a byte order mark, which JSON sent over a network must not (RFC 8259 section 8.1).'
      : 'The request body is not valid JSON (UTF-8, RFC 8259).';
    throw new HgError('HG_ERR_INVALID_BODY', { detail });
  }
  const problem = jsonTextProblem(text, maxDepth);
  if (problem?.kind === 'depth')
    throw new HgError('HG_ERR_INVALID_BODY', { detail: `The request body is nested deeper than ${maxDepth} levels (server.maxBodyDepth).` });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unprocessable([{ pointer: '', detail: 'it must be a JSON object' }]);
  if (problem !== null) throw unprocessable([{ pointer: problem.pointer, detail: TEXT_PROBLEM_DETAIL[problem.kind] }]);
  const body = value as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const name of Object.keys(body)) {
    if (!r.fields.includes(name) && !r.exposeFields.includes(name)) errors.push({ pointer: pointerTo(name), detail: 'is not a field of this resource' });
    else if (r.readOnlyFields.has(name)) errors.push({ pointer: pointerTo(name), detail: `is read-only (resources.${r.name}.readOnlyFields): leave it out` });
  }
  for (const field of fixed) {
    if (!Object.hasOwn(body, field.name)) continue;
    // A POST's new item gets its identifier from the upstream: one sent would be ignored, or worse.
    if (field.value === null)
      errors.push({
        pointer: pointerTo(field.name),
        detail: `is the new ${r.singular}'s identifier, which the upstream service assigns; leave it out (a PUT to the item's path with If-None-Match: * creates one under an identifier of your choosing)`,
      });
    else if (paramFromValue(field.type, body[field.name]) !== field.value) {
      errors.push({ pointer: pointerTo(field.name), detail: `must equal the path's ${field.name} (${field.value}) or be left out` });
    }
  }
  if (r.schema !== null) errors.push(...(patch ? r.schema.patch(body) : r.schema.whole(body)));
  if (errors.length > 0) throw unprocessable(errors);
  return body;
}
