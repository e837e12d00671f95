import { LRUCache } from 'lru-cache';
import type { CacheConfig } from '../config/types.ts';
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

  constructor(config: CacheConfig) {
    this.#lru = new LRUCache<string, Representation>({
      max: config.maxEntries,
      maxSize: config.maxBytes,
      sizeCalculation: (value, key) => value.body.length + key.length * 2 + ENTRY_OVERHEAD_BYTES,
    });
  }

  get size(): number {
    return this.#lru.size;
  }

  /** A fresh representation, or undefined. */
  fresh(key: string, nowMs: number): Representation | undefined {
    const entry = this.#lru.get(key);
    return entry !== undefined && entry.expiresAtMs > nowMs ? entry : undefined;
  }

  set(key: string, representation: Representation): void {
    this.#lru.set(key, representation);
  }

  delete(key: string): void {
    this.#lru.delete(key);
  }
}
