/**
 * Are two config values the same? Sections (plain objects) are compared key by key whatever the
 * order of their keys, so a file that only reorders a section changes nothing on reload; lists
 * compare in order, since their order can mean something (trusted proxies, algorithms). A key
 * whose value is undefined counts as absent, as it does in the JSON a config is read from.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const left = a as Readonly<Record<string, unknown>>;
  const right = b as Readonly<Record<string, unknown>>;
  const keys = definedKeys(left);
  if (keys.length !== definedKeys(right).length) return false;
  for (const key of keys) if (!sameValue(left[key], right[key])) return false;
  return true;
}

function definedKeys(section: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(section).filter((key) => section[key] !== undefined);
}
