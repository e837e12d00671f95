import type { OutgoingHttpHeader } from 'node:http';

/** ASCII lower case of one character code. */
function lower(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/** Header names compare case-insensitively; compared by character, not lower-cased, so nothing is allocated. */
function sameName(a: string, b: OutgoingHttpHeader | undefined): boolean {
  if (typeof b !== 'string' || a.length !== b.length) return false;
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) if (lower(a.charCodeAt(i)) !== lower(b.charCodeAt(i))) return false;
  return true;
}

function isDeferred(deferred: readonly string[], name: OutgoingHttpHeader | undefined): boolean {
  for (let d = 0; d < deferred.length; d += 2) if (sameName(deferred[d]!, name)) return true;
  return false;
}

/**
 * The flat list node:http writes when `deferred` (name/value pairs) had been set one by one with
 * setHeader before writeHead(status, `given`): setHeader keeps a field where it was first set
 * and takes the later name and value, so a name of `given` that is also deferred takes the
 * deferred field's place, and the rest of `given` follows in its order. Returns null when a
 * deferred name is in `given` more than once (then the caller writes the slow way). The other
 * names of `given` must be unique, as those of every prepared list of the gateway's writers are.
 */
export function mergeDeferred(deferred: readonly string[], given: readonly OutgoingHttpHeader[]): OutgoingHttpHeader[] | null {
  const out: OutgoingHttpHeader[] = [];
  for (let d = 0; d < deferred.length; d += 2) {
    const name = deferred[d]!;
    let at = -1;
    for (let g = 0; g < given.length; g += 2) {
      if (!sameName(name, given[g])) continue;
      if (at !== -1) return null;
      at = g;
    }
    if (at === -1) out.push(name, deferred[d + 1]!);
    else out.push(given[at]!, given[at + 1]!);
  }
  for (let g = 0; g < given.length; g += 2) if (!isDeferred(deferred, given[g])) out.push(given[g]!, given[g + 1]!);
  return out;
}
