import { HgError } from '../lib/errors.ts';
import type { ResponseHeaders } from '../lib/exchange.ts';
import type { Link } from '../hypermedia/resource.ts';
import type { CursorSeal } from './cursor-seal.ts';
import { MAX_CURSOR_PAYLOAD } from './cursor-seal.ts';
import type { JsonPointer } from './json-pointer.ts';
import { linkTarget } from './link-header.ts';
import { encodeValue, joinQuery } from './query-text.ts';

/** What the upstream answered for a page, as the paging links need it. */
export interface PageAnswer {
  readonly body: unknown;
  readonly headers: ResponseHeaders;
  readonly records: readonly unknown[];
  readonly total: number | null;
}

/** Where the page was asked for: the service (for problems and the Link header's check) and the full upstream path. */
export interface UpstreamSpot {
  readonly who: string;
  readonly origin: string;
  /** The service's base path and the collection's upstream path, without a query. */
  readonly path: string;
}

/**
 * One page as a request asks for it: what the upstream is asked (built on a miss only) and the
 * page's public links once it answered. Made per request, so a hit on a page allocates this one
 * object and runs none of its methods.
 */
export interface PageAsk {
  /** Most records the upstream may send for it; null for a collection answered whole. */
  readonly limit: number | null;
  /** The upstream's query for this page, with its `?`. */
  upstreamQuery(): string;
  /** self, first, prev, next and last where they exist (RFC 8288 relation names). */
  links(base: string, answer: PageAnswer, upstream: UpstreamSpot): Record<string, Link>;
}

function badPaging(upstream: UpstreamSpot, detail: string): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `${upstream.who} sent unusable paging: ${detail}.` });
}

/** The canonical spelling of an offset page: the declared parameters (`filters`, '' or ending in `&`), then offset, then limit. This is links.self and the cache key. */
export function pagePath(base: string, offset: number, limit: number, filters = ''): string {
  return `${base}?${filters}offset=${offset}&limit=${limit}`;
}

/** A collection answered whole, with declared parameters: self is its canonical spelling. */
export class WholeAsk implements PageAsk {
  readonly limit = null;
  readonly #self: string;
  readonly #upstreamQuery: string;

  constructor(self: string, upstreamQuery: string) {
    this.#self = self;
    this.#upstreamQuery = upstreamQuery;
  }

  upstreamQuery(): string {
    return this.#upstreamQuery === '' ? '' : `?${this.#upstreamQuery}`;
  }

  links(): Record<string, Link> {
    return { self: this.#self };
  }
}

/** How an offset page is asked of the upstream: offset and limit, or a page number and size. */
export interface OffsetUpstream {
  position(offset: number, limit: number): string;
}

/** `offset` style: the upstream takes the offset and limit themselves, under its names. */
export class OffsetNames implements OffsetUpstream {
  readonly #offset: string;
  readonly #limit: string;
  constructor(offset: string, limit: string) {
    this.#offset = encodeValue(offset);
    this.#limit = encodeValue(limit);
  }
  position(offset: number, limit: number): string {
    return `${this.#offset}=${offset}&${this.#limit}=${limit}`;
  }
}

/** `page` style: the upstream takes a page number (from `first`) and a size; offsets are whole pages (checked when the request is read). */
export class PageNumbers implements OffsetUpstream {
  readonly #page: string;
  readonly #size: string;
  readonly #first: number;
  constructor(page: string, size: string, first: number) {
    this.#page = encodeValue(page);
    this.#size = encodeValue(size);
    this.#first = first;
  }
  position(offset: number, limit: number): string {
    return `${this.#page}=${this.#first + offset / limit}&${this.#size}=${limit}`;
  }
}

/** The shipped paging: `offset` and `limit` under those names. */
export const OFFSET_LIMIT: OffsetUpstream = new OffsetNames('offset', 'limit');

/**
 * Where prev leads: the page before, or, from a page past the end, the last page in this page's
 * alignment (offset modulo limit) that has items. null when there is none.
 */
function prevOffset(offset: number, limit: number, count: number, total: number | null): number | null {
  if (offset === 0) return null;
  if (total === null) return count === 0 ? null : Math.max(0, offset - limit);
  if (total === 0) return null;
  if (offset - limit < total) return Math.max(0, offset - limit);
  return Math.max(0, offset - (Math.floor((offset - total) / limit) + 1) * limit);
}

/** A page by position (the `offset` and `page` styles): public offset and limit. */
export class OffsetPage implements PageAsk {
  readonly offset: number;
  readonly limit: number;
  readonly #upstream: OffsetUpstream;
  /** The declared parameters' canonical public text, '' or ending in `&`. */
  readonly #filters: string;
  /** The upstream's query before the position: its fixed query and the declared parameters. */
  readonly #upstreamFilters: string;

  constructor(offset: number, limit: number, upstream: OffsetUpstream = OFFSET_LIMIT, filters = '', upstreamFilters = '') {
    this.offset = offset;
    this.limit = limit;
    this.#upstream = upstream;
    this.#filters = filters;
    this.#upstreamFilters = upstreamFilters;
  }

  upstreamQuery(): string {
    return `?${joinQuery(this.#upstreamFilters, this.#upstream.position(this.offset, this.limit))}`;
  }

  links(base: string, { records, total }: PageAnswer): Record<string, Link> {
    const { offset, limit } = this;
    const f = this.#filters;
    const count = records.length;
    const links: Record<string, Link> = { self: pagePath(base, offset, limit, f), first: pagePath(base, 0, limit, f) };
    const prev = prevOffset(offset, limit, count, total);
    if (prev !== null) links['prev'] = pagePath(base, prev, limit, f);
    if (total === null ? count === limit : offset + limit < total) links['next'] = pagePath(base, offset + limit, limit, f);
    if (total !== null) links['last'] = pagePath(base, total === 0 ? 0 : Math.floor((total - 1) / limit) * limit, limit, f);
    return links;
  }
}

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
