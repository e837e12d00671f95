import type { Link } from '../hypermedia/resource.ts';
import type { CursorSeal } from './cursor-seal.ts';
import { MAX_CURSOR_PAYLOAD } from './cursor-seal.ts';
import type { JsonPointer } from './json-pointer.ts';
import { linkTarget } from './link-header.ts';
import { badPaging, type PageAnswer, type PageAsk, type UpstreamSpot } from './page-asks.ts';
import { encodeValue, joinQuery } from './query-text.ts';

/** How a cursor page is asked of the upstream, and where the next (and previous) page's cursor comes from. */
export interface CursorUpstream {
  /** The upstream's query for the page at `cursor` (null: the first page). */
  query(cursor: string | null, limit: number, upstreamFilters: string): string;
  /** The payload of the next page's cursor, or null on the last page. */
  next(answer: PageAnswer, upstream: UpstreamSpot): string | null;
  /** The payload of the previous page's cursor, or null where the style has none. */
  prev(answer: PageAnswer, upstream: UpstreamSpot): string | null;
}

/** A cursor value from the body (a string, or an integer) as a payload; null for none. */
function cursorValue(value: unknown, what: string, upstream: UpstreamSpot): string | null {
  if (value === undefined || value === null || value === '') return null;
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : null;
  if (text === null || Buffer.byteLength(text) > MAX_CURSOR_PAYLOAD)
    throw badPaging(upstream, `${what} is not a string or an integer of at most ${MAX_CURSOR_PAYLOAD} bytes`);
  return text;
}

/** `cursor` style: the upstream takes its own cursor and a size; the next cursor is in the body, or is the last item's key while a flag says more follow. */
export class BodyCursor implements CursorUpstream {
  readonly #cursorParam: string;
  readonly #sizeParam: string;
  readonly #next: JsonPointer | null;
  readonly #hasMore: JsonPointer | null;
  readonly #lastKey: string | null;

  constructor(cursorParam: string, sizeParam: string, next: JsonPointer | null, hasMore: JsonPointer | null, lastKey: string | null) {
    this.#cursorParam = encodeValue(cursorParam);
    this.#sizeParam = encodeValue(sizeParam);
    this.#next = next;
    this.#hasMore = hasMore;
    this.#lastKey = lastKey;
  }

  query(cursor: string | null, limit: number, upstreamFilters: string): string {
    const position = cursor === null ? `${this.#sizeParam}=${limit}` : `${this.#cursorParam}=${encodeValue(cursor)}&${this.#sizeParam}=${limit}`;
    return `?${joinQuery(upstreamFilters, position)}`;
  }

  next({ body, records }: PageAnswer, upstream: UpstreamSpot): string | null {
    if (this.#next !== null) return cursorValue(this.#next.resolve(body), this.#next.text.slice(1) || 'the body', upstream);
    const hasMore = this.#hasMore?.resolve(body);
    if (typeof hasMore !== 'boolean') throw badPaging(upstream, `${this.#hasMore?.text.slice(1) || 'the body'} is not true or false`);
    if (!hasMore) return null;
    const last = records[records.length - 1];
    const key = typeof last === 'object' && last !== null && this.#lastKey !== null ? (last as Record<string, unknown>)[this.#lastKey] : undefined;
    const value = cursorValue(key, `the last record's ${this.#lastKey ?? 'key'}`, upstream);
    if (value === null) throw badPaging(upstream, `more pages follow, but the last record has no ${this.#lastKey ?? 'key'}`);
    return value;
  }

  prev(): string | null {
    return null;
  }
}

/** Longest upstream query a Link-header cursor carries. */
const MAX_LINK_QUERY = MAX_CURSOR_PAYLOAD;

/** `link` style: the first page is asked with a size; every other page is the query of the upstream's own `Link` (rel="next" or "prev"). */
export class LinkHeaderCursor implements CursorUpstream {
  readonly #sizeParam: string;

  constructor(sizeParam: string) {
    this.#sizeParam = encodeValue(sizeParam);
  }

  query(cursor: string | null, limit: number, upstreamFilters: string): string {
    return cursor === null ? `?${joinQuery(upstreamFilters, `${this.#sizeParam}=${limit}`)}` : `?${cursor}`;
  }

  next(answer: PageAnswer, upstream: UpstreamSpot): string | null {
    return this.#linked(answer, upstream, 'next');
  }

  prev(answer: PageAnswer, upstream: UpstreamSpot): string | null {
    return this.#linked(answer, upstream, 'prev');
  }

  /**
   * The query of the upstream's link with this relation, when it leads to the same collection of
   * the same service: only the query travels in the gateway's cursor, and a link elsewhere is the
   * upstream's error (502), never a place the gateway could be sent.
   */
  #linked({ headers }: PageAnswer, upstream: UpstreamSpot, rel: string): string | null {
    const target = linkTarget(headers['link'], rel);
    if (target === null) return null;
    let url: URL;
    try {
      url = new URL(target, `${upstream.origin}${upstream.path}`);
    } catch {
      throw badPaging(upstream, `its Link rel="${rel}" is not a URL`);
    }
    if (url.origin !== upstream.origin || url.pathname !== upstream.path)
      throw badPaging(upstream, `its Link rel="${rel}" leads away from the collection's path`);
    const query = url.search.slice(1);
    if (query === '' || query.length > MAX_LINK_QUERY || !/^[\x21-\x7e]+$/.test(query))
      throw badPaging(upstream, `its Link rel="${rel}" has no query, or one longer than ${MAX_LINK_QUERY} characters`);
    return query;
  }
}

/** A page by cursor (the `cursor` and `link` styles): public cursor (opaque, sealed) and limit. */
export class CursorPage implements PageAsk {
  readonly limit: number;
  /** The opened cursor's payload; null for the first page. */
  readonly #cursor: string | null;
  readonly #token: string | null;
  readonly #upstream: CursorUpstream;
  readonly #filters: string;
  readonly #upstreamFilters: string;
  readonly #seal: CursorSeal;
  readonly #scope: string;

  constructor(
    limit: number,
    cursor: string | null,
    token: string | null,
    upstream: CursorUpstream,
    filters: string,
    upstreamFilters: string,
    seal: CursorSeal,
    scope: string,
  ) {
    this.limit = limit;
    this.#cursor = cursor;
    this.#token = token;
    this.#upstream = upstream;
    this.#filters = filters;
    this.#upstreamFilters = upstreamFilters;
    this.#seal = seal;
    this.#scope = scope;
  }

  upstreamQuery(): string {
    return this.#upstream.query(this.#cursor, this.limit, this.#upstreamFilters);
  }

  links(base: string, answer: PageAnswer, upstream: UpstreamSpot): Record<string, Link> {
    const at = (token: string | null): string => cursorPath(base, token, this.limit, this.#filters);
    const links: Record<string, Link> = { self: at(this.#token), first: at(null) };
    const prev = this.#upstream.prev(answer, upstream);
    if (prev !== null) links['prev'] = at(this.#seal.seal(this.#scope, prev));
    const next = this.#upstream.next(answer, upstream);
    if (next !== null) {
      // A next page that is this page again would send a client following next round for ever.
      if (next === this.#cursor) throw badPaging(upstream, "the next page's cursor is this page's own");
      links['next'] = at(this.#seal.seal(this.#scope, next));
    }
    return links;
  }
}

/** The canonical spelling of a cursor page: the declared parameters (`filters`, '' or ending in `&`), the cursor when there is one, then limit. */
export function cursorPath(base: string, token: string | null, limit: number, filters: string): string {
  return token === null ? `${base}?${filters}limit=${limit}` : `${base}?${filters}cursor=${token}&limit=${limit}`;
}

/** What a cursor is sealed for: the resource, the collection path and the rest of its canonical query. */
export function cursorScope(resource: string, base: string, filters: string, limit: number): string {
  return `${resource}\0${base}?${filters}limit=${limit}`;
}
