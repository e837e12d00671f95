import { CacheEntry } from '../cache/cache-entry.ts';
import { Representation } from '../cache/representation.ts';
import { FORMATS, JSON_INDEX } from '../hypermedia/formats.ts';

/** What travels beside the body (one JSON line). Times are relative, so no two clocks need agree. */
interface Meta {
  /** Age when written: ms since the upstream answered (RFC 9111 section 4.2.3). */
  readonly a: number;
  /** Freshness left when written, ms. */
  readonly t: number;
  /** The JSON variant's ETag; absent for a cached absence. */
  readonly e?: string;
  readonly c?: string;
  /** staleAllowed, as 1 or 0. */
  readonly s: number;
  readonly g: readonly string[];
  readonly r: string | null;
  /** 1 for a cached absence (the upstream's 404). */
  readonly x?: number;
  /**
   * The upstream's validator and the render suffix per format (CacheEntry.validator), absent when
   * the upstream sent none: the formats rendered from this entry elsewhere derive the same ETags
   * as on the instance that fetched it, and If-Match with them reaches the upstream as its own.
   */
  readonly u?: string;
  readonly f?: readonly string[];
}

const JSON_TYPE = (FORMATS[JSON_INDEX] as (typeof FORMATS)[number]).contentType;

/**
 * A cache entry as the shared tier stores it: "<meta JSON>\n<body>". Only the JSON variant goes
 * (the others are rendered from it on first use, as in the local cache); its body is written as
 * is, not escaped into the JSON. Returns null when nothing of it is fresh any more.
 */
export function encodeEntry(entry: CacheEntry, nowMs: number): string | null {
  const ttl = entry.expiresAtMs - nowMs;
  if (ttl <= 0) return null;
  const age = Math.max(0, nowMs - entry.storedAtMs);
  const groups = entry.groups;
  if (entry.absent) return `${JSON.stringify({ a: age, t: ttl, s: 0, g: groups, r: null, x: 1 } satisfies Meta)}\n`;
  const json = entry.variant(JSON_INDEX);
  if (json === undefined) return null;
  const validator = entry.validator;
  const meta: Meta = { a: age, t: ttl, e: json.etag, c: json.cacheControl, s: entry.staleAllowed ? 1 : 0, g: groups, r: entry.embeddedRel, ...(validator === null ? {} : { u: validator.upstream, f: validator.suffixes }) };
  return `${JSON.stringify(meta)}\n${json.body}`;
}

function isMeta(value: unknown): value is Meta {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    typeof m['a'] === 'number' &&
    typeof m['t'] === 'number' &&
    typeof m['s'] === 'number' &&
    Array.isArray(m['g']) &&
    m['g'].every((g) => typeof g === 'string') &&
    (m['r'] === null || typeof m['r'] === 'string') &&
    (m['x'] === 1 || (typeof m['e'] === 'string' && typeof m['c'] === 'string')) &&
    (m['u'] === undefined || (typeof m['u'] === 'string' && Array.isArray(m['f']) && m['f'].every((f) => typeof f === 'string')))
  );
}

/**
 * An entry read from the tier: "<Redis ms when written>\n<meta>\n<body>", read at `readAtMs`
 * (Redis ms). Its age and freshness continue from when it was written by Redis's clock, and are
 * placed on this instance's clock at `nowMs`, so Age counts from when the upstream answered
 * whatever each instance's clock says. `vary` is this instance's Vary (Accept, and Origin with
 * CORS on). null when it is malformed or no longer fresh.
 */
export function decodeEntry(stored: string, readAtMs: number, nowMs: number, vary: string): CacheEntry | null {
  const first = stored.indexOf('\n');
  const second = first === -1 ? -1 : stored.indexOf('\n', first + 1);
  if (second === -1) return null;
  const writtenAtMs = Number(stored.slice(0, first));
  let meta: unknown;
  try {
    meta = JSON.parse(stored.slice(first + 1, second));
  } catch {
    return null;
  }
  if (!Number.isFinite(writtenAtMs) || !isMeta(meta)) return null;
  const elapsed = Math.max(0, readAtMs - writtenAtMs);
  const left = meta.t - elapsed;
  if (left <= 0) return null;
  const storedAtMs = nowMs - (meta.a + elapsed);
  const expiresAtMs = nowMs + left;
  const staleAllowed = meta.s === 1;
  if (meta.x === 1) return new CacheEntry([], { storedAtMs, expiresAtMs, staleAllowed: false }, meta.g, null);
  const rep = new Representation(stored.slice(second + 1), JSON_TYPE, meta.c as string, storedAtMs, expiresAtMs, vary, staleAllowed, meta.e);
  const validator = meta.u === undefined ? null : { upstream: meta.u, suffixes: meta.f as readonly string[] };
  return new CacheEntry([rep], { storedAtMs, expiresAtMs, staleAllowed }, meta.g, meta.r, validator);
}
