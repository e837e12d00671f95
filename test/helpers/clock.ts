import type { Clock } from '../../src/lib/clock.ts';

/** A clock the test moves by hand: no sleeping for freshness, Age or expiry. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(startMs = Date.now()) {
    this.#ms = startMs;
  }
  now = (): number => this.#ms;
  advance(ms: number): void {
    this.#ms += ms;
  }
  get seconds(): number {
    return Math.floor(this.#ms / 1000);
  }
}
