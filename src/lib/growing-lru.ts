import { LRUCache } from 'lru-cache';

type BaseOptions<K extends NonNullable<unknown>, V extends NonNullable<unknown>> = Omit<
  LRUCache.OptionsBase<K, V, unknown>,
  'max' | 'maxSize' | 'sizeCalculation'
>;

/** Bounded by count alone (every entry weighs 1), or by bytes as well (each entry weighs its size). */
type GrowingOptions<K extends NonNullable<unknown>, V extends NonNullable<unknown>> = BaseOptions<K, V> &
  (
    | { readonly maxSize?: undefined; readonly sizeCalculation?: undefined }
    | { readonly maxSize: number; readonly sizeCalculation?: LRUCache.SizeCalculator<K, V> }
  );

/**
 * An LRUCache bounded by count (`maxEntries`) and optionally by bytes (`maxSize`) whose slot
 * arrays grow with use. Given `max`, lru-cache allocates every slot up front: with the default
 * 100,000 entries that is ~2.8 MB per cache (keys, values, links and free list), ~3.6 MB with
 * sizes, 1.6 MB more with TTLs, before the first request; sized by `maxSize` alone it grows plain
 * arrays as entries come. The count bound is then kept here: past `maxEntries` the least recently
 * used entry is evicted, with `dispose` called for it as lru-cache does ('evict'). Without
 * `maxSize` every entry weighs 1 and `maxSize` is `maxEntries`, so lru-cache keeps the count bound
 * itself. The price: a full cache holds ~10% more than a preallocated one (grown arrays keep spare
 * capacity, and a sizes array comes with `maxSize`), paid only by a cache that fills.
 */
export class GrowingLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>> extends LRUCache<K, V> {
  readonly maxEntries: number;
  readonly #countOnly: boolean;

  constructor(maxEntries: number, options: GrowingOptions<K, V> = {}) {
    super(options.maxSize === undefined ? { ...options, maxSize: maxEntries, sizeCalculation: () => 1 } : { ...options, maxSize: options.maxSize });
    this.maxEntries = maxEntries;
    this.#countOnly = options.maxSize === undefined;
  }

  override set(key: K, value: V, options?: LRUCache.SetOptions<K, V, unknown>): this {
    // A count-only cache's bound is its weight: an entry heavier than 1 would evict others.
    if (this.#countOnly && options?.size !== undefined) throw new TypeError('a GrowingLru without maxSize weighs every entry 1: set() takes no size');
    super.set(key, value, options);
    if (this.size > this.maxEntries) this.pop();
    return this;
  }
}
