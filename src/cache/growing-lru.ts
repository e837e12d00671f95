import { LRUCache } from 'lru-cache';

type GrowingOptions<K extends {}, V extends {}> = Omit<LRUCache.OptionsBase<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> & {
  readonly maxSize?: number;
  readonly sizeCalculation?: LRUCache.SizeCalculator<K, V>;
};

/**
 * An LRUCache bounded by count (`maxEntries`) and optionally by bytes (`maxSize`) whose slot
 * arrays grow with use. Given `max`, lru-cache allocates every slot up front: with the default
 * 100,000 entries that is ~3.6 MB per cache (keys, values, sizes, links and free list) before the
 * first request, and more with TTLs; sized by `maxSize` alone it grows its arrays as entries come.
 * The count bound is then kept here: past `maxEntries` the least recently used entry is evicted,
 * with `dispose` called for it as lru-cache does ('evict'). Without `maxSize` every entry weighs 1
 * and `maxSize` is `maxEntries`, so lru-cache keeps the count bound itself.
 */
export class GrowingLru<K extends {}, V extends {}> extends LRUCache<K, V> {
  readonly maxEntries: number;

  constructor(maxEntries: number, options: GrowingOptions<K, V> = {}) {
    super(
      options.maxSize === undefined
        ? { ...options, maxSize: maxEntries, sizeCalculation: () => 1 }
        : ({ ...options, maxSize: options.maxSize } as LRUCache.OptionsSizeLimit<K, V, unknown>),
    );
    this.maxEntries = maxEntries;
  }

  override set(key: K, value: V, options?: LRUCache.SetOptions<K, V, unknown>): this {
    super.set(key, value, options);
    if (this.size > this.maxEntries) this.pop();
    return this;
  }
}
