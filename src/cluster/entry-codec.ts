import type { CacheEntry } from '../cache/cache-entry.ts';
import { JSON_INDEX } from '../hypermedia/formats.ts';

/**
 * The version of the layout below. An entry of another version (an older or newer gateway during a
 * rolling upgrade) is not adopted: its fields may mean something else.
 */
export const TIER_FORMAT_VERSION = 2;

/** What travels beside the body (one JSON line). Times are relative, so no two clocks need agree. */
export interface SharedMeta {
  /** TIER_FORMAT_VERSION. */
  readonly v: number;
  /** The path (cache key) it was written for: an entry found under another key is not adopted. */
  readonly p: string;
  /** The fingerprint of the declaration it was rendered under (CompiledResource.fingerprint). */
  readonly d: string;
  /** Age when written: ms since the upstream answered (RFC 9111 section 4.2.3). */
  readonly a: number;
  /** Freshness left when written, ms. */
  readonly t: number;
  /** Cache-Control of the JSON variant; absent for a cached absence. */
  readonly c?: string;
  /** staleAllowed, as 1 or 0. */
  readonly s: number;
  readonly g: readonly string[];
  readonly r: string | null;
  /** 1 for a cached absence (the upstream's 404). */
  readonly x?: number;
  /**
   * The upstream's validator, absent when it sent none. The ETags are not stored: the reader
   * derives them from this (with its own render suffixes) or from the body, as the writer did.
   */
  readonly u?: string;
  /** The upstream's headers its 200s pass to the client (a service's exposeHeaders), name and value in turn; absent for none. */
  readonly h?: readonly string[];
}

/** A tier value split into its parts: well formed, of this version, but not yet checked against anything (entry-adoption.ts). */
export interface SharedRecord {
  /** Redis ms when it was written. */
  readonly writtenAtMs: number;
  readonly meta: SharedMeta;
  readonly body: string;
}

/** Why an entry read from the tier was not adopted (hypergate_shared_tier_rejected_total{reason}). */
export type RejectReason = 'format' | 'version' | 'identity' | 'declaration' | 'freshness' | 'header' | 'body';

/** An entry read from the tier and not adopted: why, and a detail for the log. */
export interface Rejection {
  readonly rejected: RejectReason;
  readonly detail: string;
}

export function rejection(rejected: RejectReason, detail: string): Rejection {
  return { rejected, detail };
}

export function isRejection(value: object): value is Rejection {
  return 'rejected' in value;
}

/**
 * A cache entry as the shared tier stores it: "<meta JSON>\n<body>" (the script puts Redis's time
 * in front). Only the JSON variant goes (the others are rendered from it on first use, as in the
 * local cache); its body is written as is, not escaped into the JSON. `path` is its key and
 * `fingerprint` its declaration's. Returns null when nothing of it is fresh any more.
 */
export function encodeEntry(entry: CacheEntry, nowMs: number, path: string, fingerprint: string): string | null {
  const ttl = entry.expiresAtMs - nowMs;
  if (ttl <= 0) return null;
  const age = Math.max(0, nowMs - entry.storedAtMs);
  const head = { v: TIER_FORMAT_VERSION, p: path, d: fingerprint, a: age, t: ttl };
  if (entry.absent) return `${JSON.stringify({ ...head, s: 0, g: entry.groups, r: null, x: 1 } satisfies SharedMeta)}\n`;
  const json = entry.variant(JSON_INDEX);
  if (json === undefined) return null;
  const validator = entry.validator;
  const meta: SharedMeta = {
    ...head,
    c: json.cacheControl,
    s: entry.staleAllowed ? 1 : 0,
    g: entry.groups,
    r: entry.embeddedRel,
    ...(validator === null ? {} : { u: validator.upstream }),
    ...(json.exposed === null ? {} : { h: json.exposed }),
  };
  return `${JSON.stringify(meta)}\n${json.body}`;
}

const optionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';

/** The types of every field (their values are checked against the reader's expectations later). */
function isMeta(m: Record<string, unknown>): boolean {
  return (
    typeof m['p'] === 'string' &&
    typeof m['d'] === 'string' &&
    typeof m['a'] === 'number' &&
    typeof m['t'] === 'number' &&
    (m['s'] === 0 || m['s'] === 1) &&
    Array.isArray(m['g']) &&
    m['g'].every((g) => typeof g === 'string') &&
    (m['r'] === null || typeof m['r'] === 'string') &&
    (m['x'] === undefined || m['x'] === 1) &&
    optionalString(m['c']) &&
    optionalString(m['u']) &&
    (m['h'] === undefined || (Array.isArray(m['h']) && m['h'].length > 0 && m['h'].length % 2 === 0 && m['h'].every((h) => typeof h === 'string')))
  );
}

/**
 * A value read from the tier: "<Redis ms when written>\n<meta>\n<body>", split and its meta parsed,
 * or why it is not one of this version. Nothing in it is trusted yet.
 */
export function parseEntry(stored: string): SharedRecord | Rejection {
  const first = stored.indexOf('\n');
  const second = first === -1 ? -1 : stored.indexOf('\n', first + 1);
  if (second === -1) return rejection('format', 'not "<time>\\n<meta>\\n<body>"');
  const time = stored.slice(0, first);
  if (!/^\d{1,16}$/.test(time)) return rejection('format', 'the time it was written is not a number');
  let meta: unknown;
  try {
    meta = JSON.parse(stored.slice(first + 1, second));
  } catch {
    return rejection('format', 'its meta is not JSON');
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return rejection('format', 'its meta is not a JSON object');
  const fields = meta as Record<string, unknown>;
  if (fields['v'] !== TIER_FORMAT_VERSION) return rejection('version', `format version ${JSON.stringify(fields['v'] ?? null)}, not ${TIER_FORMAT_VERSION}`);
  if (!isMeta(fields)) return rejection('format', 'a meta field is missing or of the wrong type');
  return { writtenAtMs: Number(time), meta: fields as unknown as SharedMeta, body: stored.slice(second + 1) };
}
