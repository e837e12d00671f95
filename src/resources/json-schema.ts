import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { FieldError } from '../lib/errors.ts';

/** A body validator: the failing fields, none when the body is valid. */
export type BodyValidator = (body: unknown) => FieldError[];

/** The validators of one schema file: a whole representation (POST, PUT) and a merge patch (PATCH). */
export interface SchemaValidators {
  readonly whole: BodyValidator;
  readonly patch: BodyValidator;
  /** The schema as written, for the OpenAPI document. */
  readonly schema: Readonly<Record<string, unknown>>;
}

/**
 * Ajv, loaded the first time a resource declares a schema: a gateway without one (the default
 * config) never loads it, ~2 MB of RSS at start (bench/RESULTS.md, memory).
 */
function loadAjv(): typeof Ajv2020 {
  const require = createRequire(import.meta.url);
  return (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The same schema for a JSON merge patch (RFC 7396): nothing is required, at the top or in any
 * object reached through `properties` (a patch names only what changes, nested objects included:
 * `{"price": {"amount": 3}}` leaves the price's other members as they are). Arrays are replaced
 * whole by a patch, so the schemas of their items keep what they require.
 */
function patchSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  delete out['required'];
  const properties = schema['properties'];
  if (isObject(properties)) {
    out['properties'] = Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, isObject(s) ? patchSchema(s) : s]));
  }
  return out;
}

/**
 * A merge patch without its nulls: a null member removes that member (RFC 7396 section 2), at any
 * depth of objects, so it is no value the schema judges. Inside an array a null is a value (the
 * array replaces the target's whole), and stays. Members keep their places, so each error's
 * pointer names the member as the client wrote it.
 */
function withoutRemovals(patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  // No prototype: a member named "__proto__" stays a member, as JSON.parse made it.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of Object.entries(patch)) if (value !== null) out[name] = withoutRemovals(value);
  return out;
}

function fieldErrors(errors: readonly ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).map((e) => {
    const missing = e.keyword === 'required' ? `/${String((e.params as { missingProperty?: string }).missingProperty ?? '')}` : '';
    return { pointer: `${e.instancePath}${missing}` || '/', detail: e.message ?? 'is not valid' };
  });
}

function validatorOf(fn: ValidateFunction): BodyValidator {
  return (body) => (fn(body) ? [] : fieldErrors(fn.errors));
}

/**
 * Reads and compiles a JSON Schema (draft 2020-12) file once, with Ajv (strict: an unknown keyword
 * or a malformed schema is a start-up error, not a silently accepting validator). Every failing
 * field is reported (allErrors), each with a JSON pointer into the body. Throws an Error whose
 * message says what is wrong with the file.
 */
export function compileSchemaFile(file: string): SchemaValidators {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON`, { cause: err });
  }
  if (!isObject(schema)) throw new Error(`${file} is not a JSON Schema object`);
  const ajv = new (loadAjv())({ allErrors: true, strict: true });
  try {
    const patch = validatorOf(ajv.compile(patchSchema(schema)));
    return { whole: validatorOf(ajv.compile(schema)), patch: (body) => patch(withoutRemovals(body)), schema };
  } catch (err) {
    throw new Error(`${file} is not a valid JSON Schema (draft 2020-12): ${(err as Error).message}`, { cause: err });
  }
}
