import type { PagingConfig } from '../config/types.ts';
import { JsonPointer } from './json-pointer.ts';
import { BodyCursor, LinkHeaderCursor, type CursorUpstream } from './cursor-pages.ts';
import { OFFSET_LIMIT, OffsetNames, PageNumbers, type OffsetUpstream } from './page-asks.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from './page-query.ts';

/** A paged collection's paging, compiled: the public limits and the upstream's side of one style. */
export interface CompiledPaging {
  readonly style: PagingConfig['style'];
  readonly defaultLimit: number;
  readonly maxLimit: number;
  /** Public `offset` (offset and page styles): how a position is asked of the upstream. */
  readonly offset: OffsetUpstream | null;
  /** Public `cursor` (cursor and link styles): how a cursor page is asked, and where the next one is. */
  readonly cursor: CursorUpstream | null;
  /** Today's paging: offset and limit under those names, 20 by default and 100 at most. */
  readonly shipped: boolean;
}

/** Each style's usual name for the page size, when `sizeParam` is null. */
const SIZE_PARAM = { page: 'size', cursor: 'limit', link: 'per_page' } as const;

/** `"paged": true` with `paging` null keeps meaning today's offset style. */
export function compilePaging(p: PagingConfig | null): CompiledPaging {
  if (p === null) return { style: 'offset', defaultLimit: DEFAULT_LIMIT, maxLimit: MAX_LIMIT, offset: OFFSET_LIMIT, cursor: null, shipped: true };
  const limits = { style: p.style, defaultLimit: p.defaultLimit, maxLimit: p.maxLimit };
  const pointer = (text: string | null): JsonPointer | null => (text === null ? null : JsonPointer.compile(text));
  switch (p.style) {
    case 'offset': {
      const shipped = p.offsetParam === 'offset' && p.limitParam === 'limit' && p.defaultLimit === DEFAULT_LIMIT && p.maxLimit === MAX_LIMIT;
      return { ...limits, offset: shipped ? OFFSET_LIMIT : new OffsetNames(p.offsetParam, p.limitParam), cursor: null, shipped };
    }
    case 'page':
      return { ...limits, offset: new PageNumbers(p.pageParam, p.sizeParam ?? SIZE_PARAM.page, p.firstPage), cursor: null, shipped: false };
    case 'cursor':
      return {
        ...limits,
        offset: null,
        cursor: new BodyCursor(p.cursorParam, p.sizeParam ?? SIZE_PARAM.cursor, pointer(p.next), pointer(p.hasMore), p.lastKey),
        shipped: false,
      };
    case 'link':
      return { ...limits, offset: null, cursor: new LinkHeaderCursor(p.sizeParam ?? SIZE_PARAM.link), shipped: false };
  }
}
