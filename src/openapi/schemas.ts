import type { JsonSchema } from '../protocol/route-doc.ts';
import type { Resource } from '../hypermedia/resource.ts';
import type { CompiledLink, CompiledResource, ResourceTable } from '../resources/compile.ts';
import { schemaName } from '../resources/naming.ts';
import { paramSchema, type ParamType } from '../resources/params.ts';

/**
 * The component schemas of the OpenAPI document, generated from the resource table: every body
 * the routes answer with, in plain JSON (the seed's `links` of paths) and in HAL (`_links` of
 * `{href}`, `_embedded` items).
 */
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const path: JsonSchema = { type: 'string', pattern: '^/' };
const halLink: JsonSchema = ref('HalLink');
const templatedJson: JsonSchema = { type: 'object', required: ['href', 'templated'], properties: { href: { type: 'string' }, templated: { const: true } } };

function links(required: readonly string[], optional: readonly string[], link: JsonSchema, declared: readonly CompiledLink[] = []): JsonSchema {
  return {
    type: 'object',
    required: [...required],
    properties: Object.fromEntries(
      [...required, ...optional].map((n) => [
        n,
        templated(
          link,
          declared.find((l) => l.rel === n),
        ),
      ]),
    ),
  };
}

/**
 * A link whose template names nested values or carries a query expression says how it is built
 * (RFC 6570); any other keeps the plain link schema, so a declaration without them describes as before.
 */
function templated(link: JsonSchema, declared: CompiledLink | undefined): JsonSchema {
  if (declared === undefined || (declared.template.query.length === 0 && !declared.template.path.params.some((p) => p.includes('.')))) return link;
  const query =
    declared.template.query.length === 0
      ? ''
      : ` Its query expression adds each of ${declared.template.query.join(', ')} that the record has, percent-encoded.`;
  return { ...link, description: `Built from ${declared.template.text} (RFC 6570): dotted names read nested values of the record.${query}` };
}

/**
 * Declared links built from path parameters only are always there; one that needs a record field,
 * or carries a query expression (a value the linked path's parameter refuses leaves it out), may be left out.
 */
function splitLinks(declared: readonly CompiledLink[]): { always: string[]; maybe: string[] } {
  const always = declared.filter((l) => l.query.length === 0 && l.sources.every((s) => 'param' in s)).map((l) => l.rel);
  const maybe = declared.filter((l) => !always.includes(l.rel)).map((l) => l.rel);
  return { always, maybe };
}

function fieldSchemas(r: CompiledResource): { properties: Record<string, JsonSchema>; required: string[] } {
  const properties: Record<string, JsonSchema> = {};
  for (const field of [...r.fields, ...r.exposeFields]) {
    if (field === r.identityField)
      properties[field] = { ...paramSchema(r.types[r.types.length - 1] as ParamType), description: 'Equals the last segment of links.self.' };
    else {
      const type = r.fieldTypes[field];
      properties[field] = type === undefined ? { description: `Any JSON value: resources.${r.name}.fieldTypes gives it no type.` } : { type };
    }
    const pointer = r.pointers?.get(field);
    // Said only of fields that declare them, so a declaration without them describes as before.
    if (pointer !== undefined) {
      const schema = properties[field];
      const said = typeof schema?.['description'] === 'string' ? `${schema['description']} ` : '';
      properties[field] = { ...schema, description: `${said}The upstream record's value at ${pointer.text}, passed as sent.` };
    }
    if (r.readOnlyFields.has(field)) properties[field] = { ...properties[field], readOnly: true };
  }
  return { properties, required: [...r.fields] };
}

function resourceSchemas(r: CompiledResource): Record<string, JsonSchema> {
  const name = schemaName(r.singular);
  const { properties, required } = fieldSchemas(r);
  const { always, maybe } = splitLinks(r.links);
  const described =
    r.exposeFields.length > 0 ? `Fields listed in resources.${r.name}.exposeFields appear when the upstream sends them.` : `The ${r.singular} resource.`;
  const out: Record<string, JsonSchema> = {
    [name]: {
      type: 'object',
      description: described,
      required: [...required, 'links'],
      properties: { ...properties, links: links(['self', ...always], maybe, path, r.links) },
    },
    [`${name}Hal`]: {
      type: 'object',
      required: ['_links', ...required],
      properties: { _links: links(['self', ...always], maybe, halLink, r.links), ...properties },
    },
  };
  const c = r.collection;
  if (c === null) return out;
  const list = `${name}${c.paged ? 'Page' : 'List'}`;
  const declared = c.links.map((l) => l.rel);
  // last needs a position: offset and page styles with a total; cursor and link styles have none.
  const byPosition = c.paging !== null && c.paging.offset !== null;
  const pageRequired = c.paged ? ['self', 'first', ...(c.total !== null && byPosition ? ['last'] : [])] : ['self'];
  const pageOptional = c.paged ? ['prev', 'next', ...(c.total === null && byPosition ? ['last'] : [])] : [];
  const total = c.total === null ? {} : { total: { type: 'integer', minimum: 0 } };
  const totalRequired = c.total === null ? [] : ['total'];
  out[list] = {
    type: 'object',
    required: ['items', ...totalRequired, 'links'],
    properties: { items: { type: 'array', items: ref(name) }, ...total, links: links([...pageRequired, ...declared], pageOptional, path) },
  };
  out[`${list}Hal`] = {
    type: 'object',
    required: ['_links', ...totalRequired, '_embedded'],
    properties: {
      _links: links([...pageRequired, ...declared], pageOptional, halLink),
      ...total,
      _embedded: { type: 'object', required: [r.name], properties: { [r.name]: { type: 'array', items: ref(`${name}Hal`) } } },
    },
  };
  return out;
}

/** Every schema the document refers to, for this table and this API root. */
export function componentSchemas(table: ResourceTable, root: Resource): Record<string, JsonSchema> {
  const rootRels = Object.keys(root.links);
  const rootLinks = Object.fromEntries(Object.entries(root.links).map(([rel, link]) => [rel, typeof link === 'string' ? path : templatedJson]));
  // The root's own fields: only `public` (the relations anyone may read), when some resource is public.
  const rootFields: Record<string, JsonSchema> =
    root.fields['public'] === undefined
      ? {}
      : { public: { type: 'array', items: { type: 'string' }, description: 'Relations of links whose reads need no credentials.' } };
  // `embeddable`, when some resource declares relations to embed: root relation → what `embed` may name.
  if (root.fields['embeddable'] !== undefined)
    rootFields['embeddable'] = {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      description: 'By relation of the links: the relation paths its `embed` parameter may name.',
    };
  return {
    HalLink: { type: 'object', required: ['href'], properties: { href: { type: 'string' }, templated: { type: 'boolean' } } },
    ...(Object.assign({}, ...table.resources.map(resourceSchemas)) as Record<string, JsonSchema>),
    ApiRoot: { type: 'object', required: ['links'], properties: { ...rootFields, links: { type: 'object', required: rootRels, properties: rootLinks } } },
    ApiRootHal: { type: 'object', required: ['_links'], properties: { ...rootFields, _links: links(rootRels, [], halLink) } },
    OpenApiDocument: {
      type: 'object',
      description: 'This document (OpenAPI 3.1).',
      required: ['openapi', 'info', 'paths'],
      properties: {
        openapi: { type: 'string', pattern: '^3\\.1\\.\\d+$' },
        info: {
          type: 'object',
          required: ['title', 'version'],
          properties: { title: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } },
        },
        servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' } } } },
        paths: { type: 'object', additionalProperties: { type: 'object' } },
        components: { type: 'object', additionalProperties: { type: 'object' } },
      },
    },
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details.',
      required: ['type', 'title', 'status', 'detail', 'code'],
      properties: {
        type: { type: 'string', format: 'uri' },
        title: { type: 'string' },
        status: { type: 'integer', minimum: 400, maximum: 599 },
        detail: { type: 'string' },
        code: { type: 'string', description: 'The stable hypergate error code (HG_ERR_*).' },
        errors: {
          type: 'array',
          description: 'In a 422 for a request body: each failing field, as a JSON pointer into the body (RFC 6901) and what is wrong with it.',
          items: { type: 'object', required: ['pointer', 'detail'], properties: { pointer: { type: 'string' }, detail: { type: 'string' } } },
        },
      },
    },
  };
}
