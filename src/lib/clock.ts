/** The one source of time: freshness, Age and token expiry all read it, so tests can move it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: Date.now };
