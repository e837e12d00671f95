import { LRUCache } from 'lru-cache';
import type { CacheConfig } from '../config/types.ts';
import type { CacheTally } from '../observability/metrics.ts';
import type { Representation } from './representation.ts';

/** Per-entry bookkeeping outside the body (object headers, key, header arrays), in bytes. */
const ENTRY_OVERHEAD_BYTES = 400;

/**
 * Rendered representations by canonical resource path, bounded by count and by bytes.
 * Freshness is ours, not lru-cache's TTL: an expired entry stays until evicted, so it can still
 * be found (and replaced) by key.
 */
export class ResponseCache {
  readonly #lru: LRUCache<string, Representation>;
  /** Hits, misses and evictions, read by /metrics; shared across reloads. */
  readonly tally: CacheTally;

  constructor(config: CacheConfig, tally: CacheTally = { hits: 0, misses: 0, stale: 0, evictions: 0 }) {
    this.tally = tally;
    this.#lru = new LRUCache<string, Representation>({
      max: config.maxEntries,
      maxSize: config.maxBytes,
      sizeCalculation: (value, key) => value.byteLength + key.length * 2 + ENTRY_OVERHEAD_BYTES,
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') tally.evictions++;
      },
    });
  }

  get size(): number {
    return this.#lru.size;
  }

  /** A fresh representation, or undefined. */
  fresh(key: string, nowMs: number): Representation | undefined {
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
  get(key: string): Representation | undefined {
    return this.#lru.get(key);
  }

  set(key: string, representation: Representation): void {
    this.#lru.set(key, representation);
  }

  /** Drops one entry; true when there was one (cache purge). */
  delete(key: string): boolean {
    return this.#lru.delete(key);
  }

  /** Drops every entry whose key satisfies `match`; returns how many (admin purge, O(entries)). */
  deleteWhere(match: (key: string) => boolean): number {
    let n = 0;
    for (const key of [...this.#lru.keys()]) {
      if (match(key) && this.#lru.delete(key)) n++;
    }
    return n;
  }

  /** Drops every entry; returns how many there were. */
  clear(): number {
    const n = this.#lru.size;
    this.#lru.clear();
    return n;
  }
}
