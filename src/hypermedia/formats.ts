import type { Link, Resource } from './resource.ts';

/** One representation format a resource can be rendered in. */
export interface Format {
  readonly name: 'json' | 'hal';
  readonly contentType: string;
  render(resource: Resource): unknown;
}

function jsonLink(link: Link): unknown {
  return typeof link === 'string' ? link : { href: link.href, templated: true };
}

/**
 * The seed's shape (docs/contract.md): fields, then `links` whose values are paths. A URI template cannot be a bare
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

export const JSON_FORMAT: Format = { name: 'json', contentType: 'application/json', render: renderJson };
export const HAL_FORMAT: Format = { name: 'hal', contentType: 'application/hal+json', render: renderHal };

/** Every resource is offered in these, in this order of preference (JSON first: the seed's format). */
export const FORMATS: readonly Format[] = [JSON_FORMAT, HAL_FORMAT];
/** Index of JSON in FORMATS: the form every cache entry is stored in. */
export const JSON_INDEX = 0;

export function renderBody(resource: Resource, format: Format): string {
  return JSON.stringify(format.render(resource));
}

/**
 * The resource a plain-JSON rendering says (its exact inverse): so the cache keeps one form of an
 * item and renders another format from it only when a client asks for that format. `items` and
 * `links` are reserved field names (resources/config-checks.ts), so nothing is ambiguous.
 * `embeddedRel` names the items' relation, which plain JSON does not carry.
 */
export function resourceFromJson(value: unknown, embeddedRel: string | null): Resource {
  const object = value as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  const links: Record<string, Link> = {};
  let items: Resource[] | undefined;
  for (const [key, field] of Object.entries(object)) {
    if (key === 'links') {
      for (const [rel, link] of Object.entries(field as Record<string, unknown>)) {
        links[rel] = typeof link === 'string' ? link : { href: (link as { href: string }).href, templated: true };
      }
    } else if (key === 'items' && embeddedRel !== null) {
      items = (field as unknown[]).map((item) => resourceFromJson(item, null));
    } else {
      fields[key] = field;
    }
  }
  return items === undefined ? { fields, links } : { fields, links, embedded: { rel: embeddedRel as string, items } };
}
