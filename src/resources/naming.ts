import type { ProblemIdentity } from '../lib/errors.ts';

const capitalized = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** "customer" → "Customer", "line-items" → "LineItems": names of schemas and operations. */
export function schemaName(word: string): string {
  return word
    .split(/[-_]/)
    .filter((w) => w !== '')
    .map(capitalized)
    .join('');
}

/**
 * What an owner rule binds a token to, for its 403: the item itself when the rule is on the item's
 * own parameter ("its own customer"), else the parameter's name without an id suffix ("customerId":
 * "its own customer"; "shop": "its own shop").
 */
export function ownerNoun(param: string, params: readonly string[], singular: string): string {
  if (param === params[params.length - 1]) return singular;
  const bare = param.replace(/_?id$/i, '');
  return bare === '' ? param : bare;
}

/** The problem identity of "no such <singular>": customer-not-found, Customer Not Found, HG_ERR_CUSTOMER_NOT_FOUND. */
export function notFoundIdentity(singular: string): ProblemIdentity {
  const words = singular.split(/[-_]/).filter((w) => w !== '');
  return {
    slug: `${words.map((w) => w.toLowerCase()).join('-')}-not-found`,
    title: `${words.map(capitalized).join(' ')} Not Found`,
    code: `HG_ERR_${words.map((w) => w.toUpperCase()).join('_')}_NOT_FOUND`,
  };
}
