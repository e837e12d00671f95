/**
 * Coalesces concurrent work per key: while a fetch for a key is under way, later callers share
 * its promise instead of starting their own. Settled work is forgotten at once, so a failure is
 * shared by the callers that waited for it and never served to later ones.
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  get size(): number {
    return this.#inFlight.size;
  }

  /** Is a fetch for this key under way (a new caller would be collapsed into it)? */
  has(key: string): boolean {
    return this.#inFlight.has(key);
  }

  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running !== undefined) return running;
    const promise = work().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }
}
