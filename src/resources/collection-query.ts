import type { CompiledCollection } from './compile.ts';
import type { CursorSeal } from './cursor-seal.ts';
import { CursorPage, cursorPath, cursorScope } from './cursor-pages.ts';
import { OffsetPage, pagePath, WholeAsk, type PageAsk } from './page-asks.ts';
import { canonicalNumber } from './page-query.ts';
import { invalidQuery, queryPairs, shownName } from './query-text.ts';

/** A collection request read: its canonical spelling (links.self, the cache key) and the page it asks for. */
export interface CollectionRead {
  readonly key: string;
  readonly ask: PageAsk;
}

/** What a collection takes, for the problem about a parameter it does not: "q, sort, offset and limit". */
function taken(c: CompiledCollection): string {
  const names = [...(c.query?.names ?? [])];
  if (c.paging !== null) names.push(c.paging.offset !== null ? 'offset' : 'cursor', 'limit');
  if (names.length === 0) return 'this collection takes no query parameters';
  const last = names.pop() as string;
  return `this collection takes ${names.length === 0 ? last : `${names.join(', ')} and ${last}`}`;
}

/**
 * Reads the query of a request to a collection that declares parameters, a paging style or a
 * fixed upstream query (CompiledCollection.plain is false): every parameter checked before
 * anything is forwarded (a 400 naming it), the declared ones in canonical order, the paging ones
 * last, and a cursor opened with the seal (a cursor the gateway did not make for this very
 * collection, filter and limit is a 400). `resource` and `base` (the collection's path) scope the cursor.
 */
export function readCollectionQuery(c: CompiledCollection, resource: string, base: string, url: string, seal: CursorSeal): CollectionRead {
  const paging = c.paging;
  const given = new Map<string, string>();
  let offsetText: string | undefined;
  let limitText: string | undefined;
  let cursorText: string | undefined;
  const once = (name: string, seen: string | undefined, list = false): void => {
    if (seen !== undefined)
      throw invalidQuery(`Query parameter "${name}" is given more than once${list ? '; a list is one parameter, its values comma-separated' : ''}.`);
  };
  for (const [name, value] of queryPairs(url)) {
    if (paging !== null && name === 'limit') {
      once(name, limitText);
      limitText = value;
    } else if (paging !== null && paging.offset !== null && name === 'offset') {
      once(name, offsetText);
      offsetText = value;
    } else if (paging !== null && paging.cursor !== null && name === 'cursor') {
      once(name, cursorText);
      cursorText = value;
    } else if (c.query?.has(name) === true) {
      once(
        name,
        given.get(name),
        c.query.params.some((p) => p.name === name && p.list),
      );
      given.set(name, value);
    } else {
      throw invalidQuery(`Query parameter ${shownName(name)} is not known here; ${taken(c)}.`);
    }
  }
  const text = c.query === null ? { public: '', upstream: c.fixedQuery } : c.query.read(given, c.fixedQuery);
  if (paging === null) {
    const key = text.public === '' ? base : `${base}?${text.public}`;
    return { key, ask: new WholeAsk(key, text.upstream) };
  }
  const filters = text.public === '' ? '' : `${text.public}&`;
  let limit = paging.defaultLimit;
  if (limitText !== undefined) {
    const n = canonicalNumber(limitText);
    if (n === null || n < 1 || n > paging.maxLimit) throw invalidQuery(`Query parameter "limit" must be an integer from 1 to ${paging.maxLimit}.`);
    limit = n;
  }
  if (paging.offset !== null) {
    let offset = 0;
    if (offsetText !== undefined) {
      const n = canonicalNumber(offsetText);
      if (n === null) throw invalidQuery('Query parameter "offset" must be an integer from 0 (decimal digits, no leading zero).');
      offset = n;
    }
    // The upstream pages by number: a position inside a page has no page number.
    if (paging.style === 'page' && offset % limit !== 0) throw invalidQuery(`Query parameter "offset" must be a multiple of limit (${limit}) here.`);
    return { key: pagePath(base, offset, limit, filters), ask: new OffsetPage(offset, limit, paging.offset, filters, text.upstream) };
  }
  const scope = cursorScope(resource, base, filters, limit);
  let cursor: string | null = null;
  if (cursorText !== undefined) {
    cursor = seal.open(scope, cursorText);
    if (cursor === null)
      throw invalidQuery('Query parameter "cursor" is not a cursor this collection gave for this query: follow the links as given, with the same parameters.');
  }
  const token = cursorText ?? null;
  const ask = new CursorPage(limit, cursor, token, paging.cursor as NonNullable<typeof paging.cursor>, filters, text.upstream, seal, scope);
  return { key: cursorPath(base, token, limit, filters), ask };
}
