/** A name as compared for a hint: case and separators (`_`, `-`, `.`) do not count. */
function normalise(name: string): string {
  return name.toLowerCase().replace(/[-_.]/g, '');
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Shortest part a prefix or suffix match needs, so that one letter does not suggest a key. */
const MIN_AFFIX = 3;

/**
 * The known name a mistyped one most likely meant, or undefined: one rule for config keys and
 * environment variables alike (undici's "did you mean" habit). Case and separators are ignored
 * (`jwks_url`, `JWKSURL` and `jwksUrl` are one name); a candidate fits when one of the two names
 * starts or ends with the other (`maxAge` for `maxAgeSeconds`, `DRAIN_TIMEOUT_MS` without its
 * section), or when it is at most a third of the typed name's length of edits away (at least 2:
 * `prot` for `port`). A name that holds the other whole is the likelier meaning (`DRAIN_TIMEOUT_MS`
is `SERVER_DRAIN_TIMEOUT_MS`, not `REDIS_TIMEOUT_MS` four edits away), so such fits come first;
among equals the fewest edits away wins; on a tie, the first known.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  const typed = normalise(name);
  const limit = Math.max(2, Math.floor(typed.length / 3));
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const other = normalise(candidate);
    const distance = editDistance(typed, other);
    const [short, long] = typed.length <= other.length ? [typed, other] : [other, typed];
    const affix = short.length >= MIN_AFFIX && (long.startsWith(short) || long.endsWith(short));
    if (!(distance <= limit || affix)) continue;
    // Affix fits rank before edit-distance fits; distances are far below 1e6.
    const score = (affix ? 0 : 1e6) + distance;
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
