/** Work under way for one key: its promise, and the stamp it was started with (a cache load ticket). */
export interface Flight<T> {
  readonly promise: Promise<T>;
  readonly stamp: number;
}

const nothing = (): void => {};

/**
 * Coalesces concurrent work per key: while a fetch for a key is under way, later callers may share
 * its promise instead of starting their own (the caller decides, from the flight's stamp, whether
 * it is still good to join). Settled work is forgotten at once, so a failure is shared by the
 * callers that waited for it and never served to later ones. The one single-flight of the
 * gateway: cache loads, token verifications and key-set fetches all go through it.
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Flight<T>>();

  get size(): number {
    return this.#inFlight.size;
  }

  /** Is a fetch for this key under way? */
  has(key: string): boolean {
    return this.#inFlight.has(key);
  }

  /** The fetch under way for this key, or undefined. */
  get(key: string): Flight<T> | undefined {
    return this.#inFlight.get(key);
  }

  /**
   * The work under way for the key, joined; else `work` started for it. For callers that may
   * always join (every flight of a key is as good as another).
   */
  run(key: string, work: () => Promise<T>): Promise<T> {
    return this.#inFlight.get(key)?.promise ?? this.start(key, 0, work, nothing);
  }

  /**
   * Starts `work` for the key, in place of any flight under way (which goes on for those that
   * joined it). `settled` runs once it is done, after the key is forgotten, so nobody can join
   * it between the two.
   */
  start(key: string, stamp: number, work: () => Promise<T>, settled: () => void): Promise<T> {
    const flight: Flight<T> = {
      stamp,
      promise: work().finally(() => {
        if (this.#inFlight.get(key) === flight) this.#inFlight.delete(key);
        settled();
      }),
    };
    this.#inFlight.set(key, flight);
    return flight.promise;
  }
}
