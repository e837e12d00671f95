/**
 * Whether this instance hears the other instances' invalidations, read by the read path on every
 * cache hit of a resource that takes writes: one boolean field, so the hit pays one load and one
 * branch while all is well. While `deaf` (the subscription is down, or not made yet), such an
 * entry answers from the local cache only within `graceMs` of the later of `sinceMs` and the
 * entry's own start (CacheEntry.storedAtMs): another instance may have answered a write of it
 * since, unheard. Past that the read asks again (the shared tier, or the upstream).
 */
export class InvalidationHearing {
  /** True while invalidations from other instances may be missed. */
  deaf: boolean;
  /** When it became deaf (this instance's clock, ms). */
  sinceMs: number;
  /** redis.invalidationGraceMs. */
  readonly graceMs: number;

  constructor(deaf: boolean, sinceMs: number, graceMs: number) {
    this.deaf = deaf;
    this.sinceMs = sinceMs;
    this.graceMs = graceMs;
  }

  /** While deaf: may a local entry whose age starts at `storedAtMs` still answer at `nowMs`? */
  mayServe(storedAtMs: number, nowMs: number): boolean {
    return nowMs - Math.max(this.sinceMs, storedAtMs) <= this.graceMs;
  }

  lost(nowMs: number): void {
    if (this.deaf) return;
    this.deaf = true;
    this.sinceMs = nowMs;
  }

  /** The subscription is back and the local cache was cleared of whatever it may have missed. */
  resynced(): void {
    this.deaf = false;
  }
}

/** What an instance without Redis hears: every invalidation there is (its own). */
export const ALWAYS_HEARING = new InvalidationHearing(false, 0, 0);
