/** What a deadline ends when it passes: an exchange in flight, a pending call. */
export interface Abortable {
  abort(reason: Error): void;
}

/**
 * One deadline over a wait: when it passes, `passed` turns true and the thing in flight under it
 * (`current`, which may change, e.g. from one attempt of a request to the next) is aborted with an
 * Error saying `why`. Whoever maps the failure reads `passed` to tell a time-out from other errors.
 *
 * The timer is armed with setTimeout's argument, not a closure, so a deadline costs one object and
 * one timer: it is armed on every upstream request of a cache miss.
 */
export class Deadline {
  /** The deadline has passed (whatever was in flight was aborted then). */
  passed = false;
  /** What is in flight under this deadline now; null between attempts. */
  current: Abortable | null;
  readonly #why: string;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(ms: number, why: string, current: Abortable | null = null) {
    this.current = current;
    this.#why = why;
    this.#timer = setTimeout(Deadline.#pass, ms, this);
  }

  /** The wait is over in time (or given up): the timer goes; `passed` stays as it is. */
  clear(): void {
    clearTimeout(this.#timer);
  }

  static #pass(deadline: Deadline): void {
    deadline.passed = true;
    deadline.current?.abort(new Error(deadline.#why));
  }
}
