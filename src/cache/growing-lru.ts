import { LRUCache } from 'lru-cache';

/**
 * An LRUCache bounded by bytes (`maxSize`) and by count (`maxEntries`) whose slot arrays grow with
 * use. Given `max`, lru-cache allocates every slot up front: with the default 100,000 entries that
 * is ~3.6 MB per cache (keys, values, sizes, links and free list) before the first request; sized
 * by `maxSize` alone it grows its arrays as entries come. The count bound is then kept here: past
 * `maxEntries` the least recently used entry is evicted, with `dispose` called for it as lru-cache
 * does ('evict').
 */
export class GrowingLru<K extends {}, V extends {}> extends LRUCache<K, V> {
  readonly maxEntries: number;

  constructor(maxEntries: number, options: Omit<LRUCache.OptionsMaxLimit<K, V, unknown> & LRUCache.OptionsSizeLimit<K, V, unknown>, 'max'>) {
    super(options);
    this.maxEntries = maxEntries;
  }

  override set(key: K, value: V, options?: LRUCache.SetOptions<K, V, unknown>): this {
    super.set(key, value, options);
    if (this.size > this.maxEntries) this.pop();
    return this;
  }
}
