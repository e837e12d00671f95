import type { CacheConfig } from '../config/types.ts';
import type { CacheTally } from '../observability/metrics.ts';
import type { CacheEntry } from './cache-entry.ts';
import { GrowingLru } from '../lib/growing-lru.ts';

/** The #dropped key that stands for "everything" (clear()); no path contains a NUL. */
const ALL = '\u0000all';

/** Invalidations remembered before the no-longer-needed ones are forgotten. */
const PRUNE_AT = 4096;

/**
 * What an entry costs besides its bodies and its path's characters, in bytes of heap: the
 * CacheEntry, the path string's header, the LRU's map entry and slots. And what each format it
 * holds adds besides the body: the Representation, its ETag and its slot. Measured on Node 20 as
 * heap growth after GC per 20,000 customers read through a gateway (bench/RESULTS.md, "what an
 * entry costs"): ~524 bytes for a 135-byte JSON body at a 19-character path, ~339 more for its
 * 154-byte HAL form (which brings the array of formats).
 */
const ENTRY_BYTES = 180;
const FORMAT_BYTES = 200;

/** Bytes one entry is charged against cache.maxBytes: everything it keeps alive (see ENTRY_BYTES). */
export function entryBytes(key: string, entry: CacheEntry): number {
  let bytes = ENTRY_BYTES + key.length + entry.byteLength;
  bytes += FORMAT_BYTES * entry.formatCount;
  return bytes;
}

/**
 * Cache entries by canonical resource path, bounded by count and by bytes. Freshness is ours, not
 * lru-cache's TTL: an expired entry stays until evicted, so it can still be found (stale answers)
 * and replaced by key.
 *
 * Entries may belong to invalidation groups (a collection's pages, everything below an item):
 * `dropGroup` removes all members without scanning the cache. Only keys that have a group are
 * indexed (pages and nested items), so the many top-level items cost the index nothing.
 */
export class ResponseCache {
  readonly #lru: GrowingLru<string, CacheEntry>;
  readonly #groups = new Map<string, Set<string>>();
  /**
   * When each key or group was last invalidated (a counter, not a clock), kept while loads that
   * began earlier are still running: a load that began before an invalidation of its key may not
   * store what it fetched (it may predate the change), so nothing dropped comes back.
   */
  readonly #dropped = new Map<string, number>();
  #epoch = 0;
  /** Start epochs of the loads under way (a few hundred at most: bounded by upstream connections and deadlines). */
  readonly #loads = new Map<number, number>();
  /** Hits, misses and evictions, read by /metrics; shared across reloads. */
  readonly tally: CacheTally;

  constructor(config: CacheConfig, tally: CacheTally = { hits: 0, misses: 0, stale: 0, evictions: 0 }) {
    this.tally = tally;
    this.#lru = new GrowingLru<string, CacheEntry>(config.maxEntries, {
      maxSize: config.maxBytes,
      sizeCalculation: (value, key) => entryBytes(key, value),
      dispose: (value, key, reason) => {
        if (reason === 'evict') tally.evictions++;
        this.#leaveGroups(key, value);
      },
    });
  }

  get size(): number {
    return this.#lru.size;
  }

  /** Bytes charged to the entries (bounded by cache.maxBytes; see entryBytes). */
  get bytes(): number {
    return this.#lru.calculatedSize;
  }

  /** A fresh entry, or undefined. */
  fresh(key: string, nowMs: number): CacheEntry | undefined {
    const entry = this.#lru.get(key);
    if (entry !== undefined && entry.expiresAtMs > nowMs) {
      this.tally.hits++;
      return entry;
    }
    this.tally.misses++;
    return undefined;
  }

  /**
   * The entry whatever its freshness (an expired one may still answer: stale-if-error,
   * stale-while-revalidate). For the miss path only; it counts nothing.
   */
  get(key: string): CacheEntry | undefined {
    return this.#lru.get(key);
  }

  /** A load is starting: its ticket says when, for `setIfCurrent`; give it back with `endLoad`. */
  beginLoad(): number {
    const ticket = this.#epoch;
    this.#loads.set(ticket, (this.#loads.get(ticket) ?? 0) + 1);
    return ticket;
  }

  endLoad(ticket: number): void {
    const left = (this.#loads.get(ticket) ?? 1) - 1;
    if (left > 0) this.#loads.set(ticket, left);
    else this.#loads.delete(ticket);
    if (this.#loads.size === 0) this.#dropped.clear();
  }

  /** Stores the entry unless its key or one of its groups was invalidated after the load's ticket; true when stored. */
  setIfCurrent(key: string, entry: CacheEntry, ticket: number): boolean {
    if (this.invalidatedSince(key, entry.groups, ticket)) return false;
    this.set(key, entry);
    return true;
  }

  /** Was the key, one of these groups, or everything invalidated since this load ticket was taken? */
  invalidatedSince(key: string, groups: readonly string[], ticket: number): boolean {
    if ((this.#dropped.get(key) ?? -1) >= ticket || (this.#dropped.get(ALL) ?? -1) >= ticket) return true;
    for (const group of groups) if ((this.#dropped.get(group) ?? -1) >= ticket) return true;
    return false;
  }

  /**
   * The one invalidation operation (writes, purge): drops these keys and every member of these
   * groups, and keeps loads already under way from storing any of them again. Returns how many
   * entries were dropped.
   */
  invalidate(keys: readonly string[], groups: readonly string[]): number {
    const epoch = this.#epoch++;
    if (this.#dropped.size > PRUNE_AT) this.#prune();
    let n = 0;
    for (const key of keys) {
      if (this.#lru.delete(key)) n++;
      if (this.#loads.size > 0) this.#dropped.set(key, epoch);
    }
    for (const group of groups) {
      n += this.dropGroup(group);
      if (this.#loads.size > 0) this.#dropped.set(group, epoch);
    }
    return n;
  }

  set(key: string, entry: CacheEntry): void {
    this.#lru.set(key, entry);
    // lru-cache refuses an entry larger than the whole cache; then there is nothing to index.
    if (entry.groups.length === 0 || this.#lru.peek(key) !== entry) return;
    for (const group of entry.groups) {
      let members = this.#groups.get(group);
      if (members === undefined) this.#groups.set(group, (members = new Set()));
      members.add(key);
    }
  }

  /** Drops one entry; true when there was one. */
  delete(key: string): boolean {
    return this.#lru.delete(key);
  }

  /** Drops every entry of the group; returns how many. */
  dropGroup(group: string): number {
    const members = this.#groups.get(group);
    if (members === undefined) return 0;
    let n = 0;
    for (const key of [...members]) if (this.#lru.delete(key)) n++;
    this.#groups.delete(group);
    return n;
  }

  /** Drops every entry (loads under way may not store theirs); returns how many there were. */
  clear(): number {
    const n = this.#lru.size;
    this.#lru.clear();
    this.#groups.clear();
    // Every load under way began before this: none of them may store.
    if (this.#loads.size > 0) this.#dropped.set(ALL, this.#epoch);
    this.#epoch++;
    return n;
  }

  /** Forgets invalidations no running load began before (with loads always under way, #dropped is never cleared whole). */
  #prune(): void {
    let oldest = Number.POSITIVE_INFINITY;
    for (const ticket of this.#loads.keys()) if (ticket < oldest) oldest = ticket;
    for (const [key, epoch] of this.#dropped) if (epoch < oldest) this.#dropped.delete(key);
  }

  #leaveGroups(key: string, entry: CacheEntry): void {
    for (const group of entry.groups) {
      const members = this.#groups.get(group);
      if (members === undefined) continue;
      members.delete(key);
      if (members.size === 0) this.#groups.delete(group);
    }
  }
}
