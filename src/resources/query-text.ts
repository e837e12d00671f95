import { HgError } from '../lib/errors.ts';

/**
 * The text of a request's query, as the declared-query path reads it: raw `name=value` pairs in
 * the order sent, values percent-decoded one by one, and the one spelling the gateway writes back
 * (`self`, the cache key, the upstream's query).
 */

/** A 400 invalid-query-parameter problem; its detail names the parameter and why. */
export function invalidQuery(detail: string): HgError {
  return new HgError('HG_ERR_INVALID_QUERY', { detail });
}

/** A parameter name as a detail may echo it: only plain text, so the detail stays safe and short. */
export function shownName(name: string): string {
  return /^[A-Za-z0-9_.-]{1,32}$/.test(name) ? `"${name}"` : 'with this name';
}

/** The query's `name=value` pairs, raw, in order; empty pairs (`?`, `?&`) are no parameter. */
export function queryPairs(url: string): [name: string, value: string][] {
  const q = url.indexOf('?');
  const out: [string, string][] = [];
  if (q === -1) return out;
  for (const pair of url.slice(q + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    out.push(eq === -1 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)]);
  }
  return out;
}

/** A value percent-decoded (`+` is a space, as HTML forms send one); null when it is not valid percent-encoded UTF-8. */
export function decodeValue(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/** A value as the gateway spells it: every character but A-Z a-z 0-9 - . _ ~ percent-encoded (UTF-8). */
export function encodeValue(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Why `text` is not a fixed query an upstream template may carry (`per_page=100&sort=id`), or null:
 * `name=value` pairs of visible ASCII, no `#`, as they will be sent.
 */
export function fixedQueryProblem(text: string): string | null {
  if (text.length > 1024) return 'a fixed query is at most 1024 characters';
  for (const pair of text.split('&')) {
    if (!/^[^=&#\s]+=[^&#\s]*$/.test(pair) || !/^[\x21-\x7e]*$/.test(pair)) return `"${pair}" is not name=value of visible ASCII characters (no "#")`;
    const decoded = decodeValue(pair);
    if (decoded === null) return `"${pair}" is not valid percent-encoding`;
  }
  return null;
}

/** The names of a fixed query's pairs. */
export function fixedQueryNames(text: string): string[] {
  return text === '' ? [] : text.split('&').map((pair) => decodeValue(pair.slice(0, pair.indexOf('='))) ?? pair);
}

/** An upstream template's path and its fixed query (`/v1/products?per_page=100`), without the `?`. */
export function splitTemplate(text: string): { readonly path: string; readonly query: string } {
  const q = text.indexOf('?');
  return q === -1 ? { path: text, query: '' } : { path: text.slice(0, q), query: text.slice(q + 1) };
}

/** `a` and `b` joined as one query text, either may be empty. */
export function joinQuery(a: string, b: string): string {
  return a === '' ? b : b === '' ? a : `${a}&${b}`;
}
