/** What a shared cache may do with an upstream answer (RFC 9111 section 5.2.2). */
export interface UpstreamFreshness {
  /** no-store, private or no-cache: do not keep it. */
  readonly noStore: boolean;
  /** s-maxage, else max-age, in seconds; null when the upstream gave none. */
  readonly maxAgeSeconds: number | null;
  /**
   * May a stale copy answer (stale-if-error, stale-while-revalidate)? Not after must-revalidate,
   * proxy-revalidate, or s-maxage, which implies proxy-revalidate (RFC 9111 sections 4.2.4, 5.2.2.10).
   */
  readonly staleAllowed: boolean;
}

const NONE: UpstreamFreshness = Object.freeze({ noStore: false, maxAgeSeconds: null, staleAllowed: true });

function seconds(value: string): number | null {
  const unquoted = value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  return /^\d+$/.test(unquoted) ? Math.min(Number(unquoted), 2 ** 31) : null;
}

export function parseCacheControl(header: string | string[] | undefined): UpstreamFreshness {
  if (header === undefined) return NONE;
  const text = Array.isArray(header) ? header.join(',') : header;
  let noStore = false;
  let maxAge: number | null = null;
  let sMaxAge: number | null = null;
  let staleAllowed = true;
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? '' : part.slice(eq + 1).trim();
    // A shared cache must not store private answers (5.2.2.7); no-cache needs revalidation we do not do (5.2.2.4).
    if (name === 'no-store' || name === 'private' || name === 'no-cache') noStore = true;
    else if (name === 'max-age') maxAge = seconds(value);
    else if (name === 's-maxage') {
      sMaxAge = seconds(value);
      staleAllowed = false;
    } else if (name === 'must-revalidate' || name === 'proxy-revalidate') staleAllowed = false;
  }
  return { noStore, maxAgeSeconds: sMaxAge ?? maxAge, staleAllowed };
}
