import { HgError } from '../lib/errors.ts';
import type { ResponseHeaders } from '../lib/exchange.ts';
import type { Link } from '../hypermedia/resource.ts';
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

export function badPaging(upstream: UpstreamSpot, detail: string): HgError {
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
