import type { RedisLink } from './redis-link.ts';

/** How often the count is asked again, ms: an instance that starts or stops is seen within this. */
const REFRESH_MS = 1000;

/**
 * How many instances share this Redis prefix: the subscribers of its invalidation channel, where
 * every instance (every worker) holds one subscription. Asked at once and then every second, off
 * any request's path; while Redis does not answer, the last count stands, and before any answer
 * it is 1 (alone). A cluster rate limit's fallback gives each instance its share of the limit by it.
 */
export class ClusterSize {
  readonly #link: RedisLink;
  readonly #channel: string;
  readonly #timer: NodeJS.Timeout;
  #count = 1;

  constructor(link: RedisLink, channel: string) {
    this.#link = link;
    this.#channel = channel;
    this.#timer = setInterval(() => this.#refresh(), REFRESH_MS).unref();
    this.#refresh();
  }

  /** The instances last counted (at least 1: this one). */
  get count(): number {
    return this.#count;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #refresh(): void {
    this.#link
      .call('instances', (client) => client.pubsub('NUMSUB', this.#channel))
      .then(
        (answer) => {
          const subscribers = Array.isArray(answer) ? answer[1] : undefined;
          if (typeof subscribers === 'number' && subscribers > 0) this.#count = subscribers;
        },
        // Redis away: the last count stands (counted in the call metrics).
        () => {},
      );
  }
}
