import type { Config } from '../config/types.ts';
import { closest } from '../config/closest.ts';
import { HgError } from '../lib/errors.ts';
import type { CompiledLink, CompiledResource, ResourceTable } from '../resources/compile.ts';
import { redactedDeclaration } from './redacted-config.ts';

const linksOf = (links: readonly CompiledLink[]): Record<string, string> => Object.fromEntries(links.map((l) => [l.rel, l.template.text]));

/** What a request to one resource is served by, read off its compiled form (GET /resources/<name>). */
function compiledView(r: CompiledResource): Record<string, unknown> {
  const c = r.collection;
  return {
    singular: r.singular,
    rel: r.rel,
    item: { path: r.item.text, route: r.item.route, params: Object.fromEntries(r.item.params.map((p, i) => [p, r.types[i]])) },
    service: r.service.name,
    upstream: r.upstream.target.text,
    record: r.record.text,
    fields: r.fields,
    fieldTypes: r.fieldTypes,
    exposeFields: r.exposeFields,
    links: linksOf(r.links),
    scope: r.scope,
    writeScope: r.writeScope,
    methods: [...r.methods],
    owner: r.owner === null ? null : { param: r.item.params[r.owner.param], noun: r.owner.noun },
    maxAgeSeconds: r.maxAgeSeconds,
    requireIfMatch: r.requireIfMatch,
    idempotencyRequired: r.idempotencyRequired,
    schema: r.schema !== null,
    collection:
      c === null
        ? null
        : {
            path: c.path.text,
            route: c.path.route,
            upstream: c.upstream.target.text,
            items: c.items.text,
            total: c.total === null ? null : (c.total.header ?? c.total.pointer.text),
            paged: c.paged,
            cacheItems: c.cacheItems,
            links: linksOf(c.links),
          },
    fingerprint: r.fingerprint,
  };
}

/**
 * One resource as in force: its declaration (defaults filled in, secrets redacted) and what it
 * was compiled to. An unknown name is a 404 naming the closest declared one.
 */
export function resourceView(name: string, config: Config, table: ResourceTable): Record<string, unknown> {
  const resource = table.resources.find((r) => r.name === name);
  const declared = config.resources[name];
  if (resource === undefined || declared === undefined) {
    const names = table.resources.map((r) => r.name);
    const hint = closest(name, names);
    const known = names.length === 0 ? 'none is declared' : `declared: ${names.join(', ')}`;
    throw new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: `No resource named "${name}" (${hint === undefined ? known : `did you mean "${hint}"?`}).` });
  }
  return { name, declaration: redactedDeclaration(declared), compiled: compiledView(resource) };
}
