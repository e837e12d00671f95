import { HgError } from '../lib/errors.ts';
import { OffsetPage } from './page-asks.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

function invalid(detail: string): HgError {
  return new HgError('HG_ERR_INVALID_QUERY', { detail });
}

/** Canonical decimal digits ("0", or no leading zero), up to 2^53-1; else null. */
export function canonicalNumber(text: string): number | null {
  if (text.length === 0 || text.length > 16) return null;
  if (text.length > 1 && text.charCodeAt(0) === 48) return null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const n = Number(text);
  return n <= Number.MAX_SAFE_INTEGER ? n : null;
}

/**
 * The collection's query: `offset` (from 0, default 0) and `limit` (1 to 100, default 20), each
 * at most once, in canonical decimal. Anything else, unknown parameters included, is a 400 that
 * names the parameter: a query we do not understand must not silently mean the first page.
 */
export function parsePageQuery(url: string): OffsetPage {
  const q = url.indexOf('?');
  let offset: number | null = null;
  let limit: number | null = null;
  if (q !== -1) {
    for (const pair of url.slice(q + 1).split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      if (name === 'offset') {
        if (offset !== null) throw invalid('Query parameter "offset" is given more than once.');
        offset = canonicalNumber(value);
        if (offset === null) throw invalid('Query parameter "offset" must be an integer from 0 (decimal digits, no leading zero).');
      } else if (name === 'limit') {
        if (limit !== null) throw invalid('Query parameter "limit" is given more than once.');
        limit = canonicalNumber(value);
        if (limit === null || limit < 1 || limit > MAX_LIMIT) throw invalid(`Query parameter "limit" must be an integer from 1 to ${MAX_LIMIT}.`);
      } else {
        throw unknown(name, 'use offset and limit');
      }
    }
  }
  return new OffsetPage(offset ?? 0, limit ?? DEFAULT_LIMIT);
}

/** A parameter the collection does not take: a 400 naming it, and what the collection does take. */
function unknown(name: string, instead: string): HgError {
  // The name is echoed only when it is plain text, so the detail stays safe and short.
  const shown = /^[A-Za-z0-9_.-]{1,32}$/.test(name) ? `"${name}"` : 'with this name';
  return invalid(`Query parameter ${shown} is not known here; ${instead}.`);
}

/**
 * The query of a collection answered whole takes no parameter: any is a 400 naming it, as a paged
 * collection answers one it does not know (a query we do not understand must not silently mean
 * the whole list). Empty pairs (`?`, `?&`) are no parameter.
 */
export function refuseQuery(url: string): void {
  const q = url.indexOf('?');
  if (q === -1) return;
  for (const pair of url.slice(q + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    throw unknown(eq === -1 ? pair : pair.slice(0, eq), 'this collection takes no query parameters');
  }
}
