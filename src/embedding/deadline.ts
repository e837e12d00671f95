import { HgError } from '../lib/errors.ts';

/**
 * The one deadline of an assembled answer (`embedding.timeoutMs`), counted from when the request
 * was taken up: every read of the answer races it, and one not done by then fails as a timeout
 * (a 504, which a relation's `onError` turns into an omitted part or a failed answer). The read
 * itself goes on (single-flight and the cache may still use what it brings); the answer stops
 * waiting for it.
 */
export class Deadline {
  readonly #expired: Promise<never>;
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number) {
    this.#expired = new Promise<never>((_resolve, reject) => {
      this.#timer = setTimeout(() => reject(new HgError('HG_ERR_UPSTREAM_TIMEOUT', { detail: `The answer was not assembled within ${ms} ms.` })), ms);
    });
    // Nobody may be racing it when it fires: that rejection is expected, not unhandled.
    this.#expired.catch(() => {});
  }

  /** `read`, or a timeout when the deadline comes first. */
  within<T>(read: Promise<T>): Promise<T> {
    return Promise.race([read, this.#expired]);
  }

  /** The answer is done: the timer goes. */
  clear(): void {
    clearTimeout(this.#timer);
  }
}
