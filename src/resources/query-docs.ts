import type { ParamDoc } from '../protocol/route-doc.ts';
import type { CompiledCollection, CompiledResource } from './compile.ts';
import { schemaName } from './naming.ts';
import { DEFAULT_LIMIT } from './page-query.ts';
import type { QueryModel, QueryParam } from './query-model.ts';

/** A declared parameter's JSON Schema (one value; a list is an array sent comma-separated). */
function schemaOf(param: QueryParam, model: QueryModel): Readonly<Record<string, unknown>> {
  const c = model.declarationOf(param.name);
  const one = ((): Record<string, unknown> => {
    switch (c.type) {
      case 'integer':
        return { type: 'integer', ...(c.min === null ? {} : { minimum: c.min }), ...(c.max === null ? {} : { maximum: c.max }) };
      case 'boolean':
        return { type: 'boolean' };
      case 'enum':
        return { type: 'string', enum: c.values ?? [] };
      case 'string':
        return { type: 'string', minLength: 1, maxLength: c.maxLength, ...(c.pattern === null ? {} : { pattern: `^(?:${c.pattern})$` }) };
    }
  })();
  const withDefault = (schema: Record<string, unknown>): Record<string, unknown> => (c.default === null ? schema : { ...schema, default: c.default });
  return c.list ? withDefault({ type: 'array', items: one, minItems: 1, maxItems: c.maxItems }) : withDefault(one);
}

/** The OpenAPI parameters of a declared query (none when it declares nothing). */
export function declaredQueryDocs(model: QueryModel | null): ParamDoc[] {
  if (model === null) return [];
  return model.params.map((param) => ({
    name: param.name,
    in: 'query' as const,
    required: param.required,
    description: `Must be ${param.rule}${param.list ? ' (style form, not exploded)' : ''}; anything else is a 400 naming it.`,
    schema: schemaOf(param, model),
    ...(param.list ? { explode: false as const } : {}),
  }));
}

/** The paging parameters of a collection: offset or cursor, and limit (none for a collection answered whole). */
export function pagingParams(r: CompiledResource, c: CompiledCollection): ParamDoc[] {
  const p = c.paging;
  if (p === null) return [];
  const limit: ParamDoc = {
    name: 'limit',
    in: 'query',
    required: false,
    description: `${schemaName(r.name)} per page.`,
    schema: { type: 'integer', minimum: 1, maximum: p.maxLimit, default: p.defaultLimit },
  };
  if (p.offset !== null) {
    const step = p.style === 'page' ? ' A multiple of limit: the upstream pages by number.' : '';
    return [
      {
        name: 'offset',
        in: 'query',
        required: false,
        description: `Index of the first ${r.singular} of the page.${step}`,
        schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
      },
      limit,
    ];
  }
  return [
    {
      name: 'cursor',
      in: 'query',
      required: false,
      description:
        'Where the page starts: a cursor taken from a next or prev link of this collection with the same other parameters, as given (opaque; any other is a 400). Without one: the first page.',
      schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}$' },
    },
    limit,
  ];
}

/** The collection route's description: how its pages are spelt and linked. */
export function collectionDescription(r: CompiledResource, c: CompiledCollection): string {
  const p = c.paging;
  if (p === null) {
    return c.query === null
      ? `Every ${r.singular} of the collection, each with links.self. It takes no query parameters: any is a 400 naming it.`
      : `Every ${r.singular} of the collection, each with links.self. It takes the declared query parameters only; links.self is the canonical spelling: every parameter that has a value, by name.`;
  }
  if (c.plain)
    return `${schemaName(r.name)} in pages. links.self is the canonical spelling of the page: both parameters, offset first (${c.path.text}?offset=0&limit=${DEFAULT_LIMIT}), whatever spelling was requested. prev and next appear only where they exist.`;
  const filters = c.query === null ? '' : 'the declared parameters that have a value, by name, then ';
  const position = p.offset !== null ? 'offset, then limit' : 'cursor (on pages after the first), then limit';
  const last = p.offset !== null && c.total !== null ? ' last appears with the total.' : ' There is no last link.';
  const prev = p.style === 'cursor' ? 'next appears where there is one (the upstream pages forward only).' : 'prev and next appear only where they exist.';
  return `${schemaName(r.name)} in pages. links.self is the canonical spelling of the page: ${filters}${position}, whatever spelling was requested. ${prev}${last}`;
}
