/**
 * A value now, or a promise of it. The hot path (a cached token, a cached entry) answers
 * synchronously; only what must wait (a verification, an upstream load) makes a promise.
 */
export type SyncOrPromise<T> = T | Promise<T>;

/**
 * `next` applied to the value: at once when it is here, else once its promise fulfils. A value
 * that is here costs no promise and no microtask, so a cache hit stays synchronous. `next` should
 * exist already: a closure made per call just to pass here is an allocation that an explicit
 * `instanceof Promise` branch avoids, which is why the item and API root reads keep theirs.
 */
export function andThen<T, U>(value: SyncOrPromise<T>, next: (value: T) => SyncOrPromise<U>): SyncOrPromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
