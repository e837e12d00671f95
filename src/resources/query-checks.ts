import type { CollectionConfig, ResourceConfig } from '../config/types.ts';
import { JsonPointer } from './json-pointer.ts';
import { PAGING_NAMES, QUERY_NAME, QueryParam } from './query-model.ts';
import { fixedQueryNames, fixedQueryProblem, splitTemplate } from './query-text.ts';

/** A field name (RFC 9110 section 5.1): a token. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The path part of an upstream template; the fixed query after its `?` is checked here under `key`. */
export function upstreamPath(text: string, key: string, problems: string[]): string {
  const { path, query } = splitTemplate(text);
  if (text.includes('?')) {
    const problem = query === '' ? 'an empty fixed query (nothing after "?")' : fixedQueryProblem(query);
    if (problem !== null) problems.push(`${key}: ${problem}, got ${JSON.stringify(text)}`);
  }
  return path;
}

/**
 * The declared query parameters of an item or a collection: names a URL carries as they are,
 * paging's own names kept for paging, each declaration able to work (type-specific keys, bounds
 * in order, a pattern that compiles, a default that fits), and one upstream name each.
 */
export function checkQuery(declared: ResourceConfig['query'], at: string, paged: boolean, taken: readonly string[], problems: string[]): void {
  const upstreamNames = new Map<string, string>(taken.map((name) => [name, 'the fixed query or paging']));
  for (const [name, q] of Object.entries(declared)) {
    const key = `${at}.${name}`;
    if (!QUERY_NAME.test(name)) problems.push(`${key}: a query parameter name starts with a letter or _ and has only letters, digits, _, . and - (at most 64)`);
    if (paged && PAGING_NAMES.includes(name)) problems.push(`${key}: "${name}" is a paging parameter of the gateway's own`);
    if ((q.type === 'enum') !== (q.values !== null))
      problems.push(`${key}.values: ${q.type === 'enum' ? 'an "enum" parameter lists its values' : 'only an "enum" parameter has values'}`);
    if (q.values !== null && q.values.length === 0) problems.push(`${key}.values: expected at least one value`);
    if (q.type !== 'integer' && (q.min !== null || q.max !== null)) problems.push(`${key}: min and max bound an "integer" parameter only`);
    if (q.min !== null && q.max !== null && q.min > q.max) problems.push(`${key}.min: greater than max (${q.max})`);
    if (q.type !== 'string' && q.pattern !== null) problems.push(`${key}.pattern: only a "string" parameter has a pattern`);
    if (q.required && q.default !== null) problems.push(`${key}.default: a required parameter has no default`);
    const upstream = q.upstream ?? name;
    const other = upstreamNames.get(upstream);
    if (other !== undefined) problems.push(`${key}.upstream: "${upstream}" is also sent for ${other}`);
    else upstreamNames.set(upstream, key);
    try {
      new QueryParam(name, q);
    } catch (err) {
      problems.push(`${key}: ${err instanceof SyntaxError ? `pattern is not a regular expression (${err.message})` : (err as Error).message}`);
    }
  }
}

function pointer(text: string | null, key: string, problems: string[]): void {
  if (text === null) return;
  const problem = JsonPointer.problem(text);
  if (problem !== null) problems.push(`${key}: ${problem}, got ${JSON.stringify(text)}`);
}

/** The upstream's names a collection's paging sends (none when it is answered whole). */
function pagingUpstreamNames(c: CollectionConfig): string[] {
  const p = c.paging;
  if (!c.paged) return [];
  if (p === null) return ['offset', 'limit'];
  switch (p.style) {
    case 'offset':
      return [p.offsetParam, p.limitParam];
    case 'page':
      return [p.pageParam, p.sizeParam ?? 'size'];
    case 'cursor':
      return [p.cursorParam, p.sizeParam ?? 'limit'];
    case 'link':
      return [p.sizeParam ?? 'per_page'];
  }
}

/** A collection's total, paging and query: what each style needs, and no name sent twice. */
export function checkCollectionQuery(c: CollectionConfig, at: string, problems: string[]): void {
  if (typeof c.total === 'string') pointer(c.total, `${at}.total`, problems);
  else if (c.total !== null && !HTTP_TOKEN.test(c.total.header)) problems.push(`${at}.total.header: not an HTTP header name (RFC 9110 section 5.1)`);
  const p = c.paging;
  if (p !== null) {
    if (!c.paged) problems.push(`${at}.paging: set on a collection answered whole ("paged": false)`);
    if (p.defaultLimit > p.maxLimit) problems.push(`${at}.paging.defaultLimit: greater than maxLimit (${p.maxLimit})`);
    for (const key of ['next', 'hasMore'] as const) pointer(p[key], `${at}.paging.${key}`, problems);
    if (p.style === 'cursor') {
      const byBody = p.next !== null;
      const byFlag = p.hasMore !== null || p.lastKey !== null;
      if (byBody === byFlag) problems.push(`${at}.paging: the "cursor" style takes either next (a pointer to the next cursor) or hasMore with lastKey`);
      else if (byFlag && (p.hasMore === null || p.lastKey === null)) problems.push(`${at}.paging: hasMore and lastKey go together`);
    } else if (p.next !== null || p.hasMore !== null || p.lastKey !== null) {
      problems.push(`${at}.paging: next, hasMore and lastKey belong to the "cursor" style`);
    }
  }
  const { query } = splitTemplate(c.upstream);
  const fixed = query === '' || fixedQueryProblem(query) !== null ? [] : fixedQueryNames(query);
  const paging = pagingUpstreamNames(c);
  for (const name of fixed) if (paging.includes(name)) problems.push(`${at}.upstream: the fixed query sets "${name}", which paging sends`);
  checkQuery(c.query, `${at}.query`, c.paged, [...fixed, ...paging], problems);
}
