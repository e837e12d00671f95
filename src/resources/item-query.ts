import type { QueryModel } from './query-model.ts';
import { invalidQuery, queryPairs, shownName } from './query-text.ts';

/**
 * The cache key of an item read with declared query parameters: the item's path and its canonical
 * query (declared parameters only, each once, in canonical order). Anything else is a 400 naming it.
 */
export function readItemQuery(model: QueryModel, path: string, url: string): string {
  const given = new Map<string, string>();
  for (const [name, value] of queryPairs(url)) {
    if (!model.has(name)) throw invalidQuery(`Query parameter ${shownName(name)} is not known here; this resource takes ${model.names.join(', ')}.`);
    if (given.has(name)) throw invalidQuery(`Query parameter "${name}" is given more than once.`);
    given.set(name, value);
  }
  const text = model.read(given, '').public;
  return text === '' ? path : `${path}?${text}`;
}
