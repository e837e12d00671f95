/**
 * The deepest nesting of arrays and objects the gateway takes in JSON it renders or checks. JSON.parse
 * reads any depth, but JSON.stringify, and every other recursive walk, overflows the stack a few
 * thousand levels down (about 4,000 on Node 20 with its default stack): a value deeper than that
 * would fail while it is rendered, far from where it came in. 1000 leaves room for the levels a
 * page and its items add, and for the frames below the call. server.maxBodyDepth may not exceed it.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Is `value` nested more than `max` levels deep? An array or object is one level more than the
 * deepest of its members; a scalar is none. Walks with a stack of its own, not by recursion, so
 * it measures a value too deep for the call stack too, and stops at the first path past `max`.
 */
export function deeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const pending: unknown[] = [value];
  const depths: number[] = [1];
  while (pending.length > 0) {
    const next = pending.pop() as object;
    const depth = depths.pop() as number;
    if (depth > max) return true;
    for (const member of Array.isArray(next) ? next : Object.values(next)) {
      if (typeof member === 'object' && member !== null) {
        pending.push(member);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
