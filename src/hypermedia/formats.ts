import type { Link, Resource } from './resource.ts';

/** One representation format a resource can be rendered in. */
export interface Format {
  readonly name: 'json' | 'hal';
  readonly contentType: string;
  /**
   * Appended to the resource path to make the cache key. Empty for JSON, so the hot path
   * (JSON, cache hit) uses the path itself and concatenates nothing.
   */
  readonly keySuffix: string;
  render(resource: Resource): unknown;
}

function jsonLink(link: Link): unknown {
  return typeof link === 'string' ? link : { href: link.href, templated: true };
}

/**
 * The seed's shape: fields, then `links` whose values are paths. A URI template cannot be a bare
 * path, so it is `{href, templated: true}`. Collection items come first, as `items`.
 */
function renderJson(resource: Resource): unknown {
  const out: Record<string, unknown> = {};
  if (resource.embedded !== undefined) out['items'] = resource.embedded.items.map(renderJson);
  Object.assign(out, resource.fields);
  const links: Record<string, unknown> = {};
  for (const [rel, link] of Object.entries(resource.links)) links[rel] = jsonLink(link);
  out['links'] = links;
  return out;
}

/** HAL (draft-kelly-json-hal): `_links` of `{href}` objects, items in `_embedded`. */
function renderHal(resource: Resource): unknown {
  const links: Record<string, unknown> = {};
  for (const [rel, link] of Object.entries(resource.links)) {
    links[rel] = typeof link === 'string' ? { href: link } : { href: link.href, templated: true };
  }
  const out: Record<string, unknown> = { _links: links, ...resource.fields };
  if (resource.embedded !== undefined) out['_embedded'] = { [resource.embedded.rel]: resource.embedded.items.map(renderHal) };
  return out;
}

export const JSON_FORMAT: Format = { name: 'json', contentType: 'application/json', keySuffix: '', render: renderJson };
export const HAL_FORMAT: Format = { name: 'hal', contentType: 'application/hal+json', keySuffix: '\u0000hal', render: renderHal };

/** Every resource is offered in these, in this order of preference (JSON first: the seed's format). */
export const FORMATS: readonly Format[] = [JSON_FORMAT, HAL_FORMAT];

export function renderBody(resource: Resource, format: Format): string {
  return JSON.stringify(format.render(resource));
}
