import type { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import type { RedisLink } from './redis-link.ts';
import type { RedisMetrics } from './redis-metrics.ts';
import { InvalidationHearing } from './hearing.ts';
import { CLEAR, INVALIDATE } from './scripts.ts';

/** One invalidation as it travels: who sent it, its number there, and what to drop (null keys: everything). */
interface Message {
  readonly o: string;
  readonly n?: number;
  readonly k?: readonly string[];
  readonly g?: readonly string[];
}

/** Keys and groups waiting to be sent again before they are merged into one "drop everything". */
const MAX_QUEUED_NAMES = 10_000;
/** How often invalidations Redis did not take are tried again, ms. */
const RETRY_MS = 1000;

function isMessage(value: unknown): value is Message {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  const names = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
  return typeof m['o'] === 'string' && (m['n'] === undefined || typeof m['n'] === 'number') && names(m['k']) && names(m['g']);
}

/** The pub/sub channel of invalidations under a key prefix (the scripts publish to the same name). */
export function invalidationChannel(prefix: string): string {
  return `${prefix}invalidate`;
}

/**
 * Invalidations between instances: each one is sent with the script that also drops it from the
 * shared tier (so no instance reads the old entry back from Redis), and every instance drops it
 * from its local cache when the message arrives (not the sender: it already has). Pub/sub keeps
 * nothing for a subscriber that is away, so each time the subscription is made again the local
 * cache is cleared whole; until then `hearing` says the instance is deaf (from its start until the
 * first subscription, and from a lost connection until the next), and the read path bounds how
 * long entries that writes change answer from the local cache (hearing.ts). An invalidation Redis
 * does not take in time is kept (bounded) and sent again every second until it does.
 */
export class InvalidationBus {
  readonly #link: RedisLink;
  readonly #cache: () => ResponseCache | null;
  readonly #metrics: RedisMetrics;
  readonly #logger: Logger;
  readonly #origin: string;
  /** How long an invalidation keeps loads that began before it from storing, ms. */
  readonly #markMs: number;
  #queuedKeys = new Set<string>();
  #queuedGroups = new Set<string>();
  #queuedAll = false;
  #retry: NodeJS.Timeout | null = null;
  /** Queued invalidations being sent again, not yet confirmed. */
  #resending = 0;
  #subscriptions = 0;
  #closed = false;
  /** Numbers this instance's messages carry, and the sends waiting for their own message to come back. */
  #sent = 0;
  readonly #echoes = new Map<number, () => void>();
  /** Whether invalidations from other instances reach this one now; deaf until the first subscription. */
  readonly hearing: InvalidationHearing;

  constructor(
    link: RedisLink,
    cache: () => ResponseCache | null,
    metrics: RedisMetrics,
    logger: Logger,
    origin: string,
    times: { readonly markMs: number; readonly graceMs: number; readonly clock: Clock },
  ) {
    this.hearing = new InvalidationHearing(true, times.clock.now(), times.graceMs);
    this.#link = link;
    this.#cache = cache;
    this.#metrics = metrics;
    this.#logger = logger;
    this.#origin = origin;
    this.#markMs = times.markMs;
    link.subscribe(
      invalidationChannel(link.prefix),
      (message) => this.#received(message),
      () => this.#subscribed(),
      () => this.hearing.lost(times.clock.now()),
    );
  }

  /**
   * Sends an invalidation (keys and groups, or everything when `keys` is null); resolves with the
   * instances reached, or null. Redis confirms the script once it has queued the message for every
   * subscriber, and may write the confirmation out before their copies: while this instance hears
   * the channel, it also waits (within the same deadline) for its own copy to come back, so the
   * others' were written too before a write's answer goes out.
   */
  send(keys: readonly string[] | null, groups: readonly string[], deadlineMs: number): Promise<number | null> {
    const n = ++this.#sent;
    if (this.hearing.deaf) return this.#send(keys, groups, deadlineMs, false, n);
    let timer: NodeJS.Timeout | undefined;
    const echoed = new Promise<void>((resolve) => {
      this.#echoes.set(n, resolve);
      timer = setTimeout(resolve, deadlineMs);
    }).finally(() => {
      clearTimeout(timer);
      this.#echoes.delete(n);
    });
    return this.#send(keys, groups, deadlineMs, false, n).then(async (reached) => {
      if (reached === null) this.#echoes.get(n)?.();
      await echoed;
      return reached;
    });
  }

  /**
   * `again`: queued ones sent again. Refused, they are queued once more without being counted
   * again: `queued` counts invalidations Redis did not take at once, not the seconds it stays down.
   */
  #send(keys: readonly string[] | null, groups: readonly string[], deadlineMs: number, again: boolean, n?: number): Promise<number | null> {
    // A write's answer waits for this (read-your-write on the other instances): it is sent even
    // while a request's call is overdue, within its own deadline.
    const sent =
      keys === null
        ? this.#link.script(
            'invalidate',
            CLEAR,
            [this.#link.slotKey],
            [this.#link.prefix, this.#markMs, JSON.stringify({ o: this.#origin, n } satisfies Message)],
            deadlineMs,
            'despite-overdue',
          )
        : this.#link.script(
            'invalidate',
            INVALIDATE,
            [this.#link.slotKey],
            [this.#link.prefix, this.#markMs, JSON.stringify({ o: this.#origin, n, k: keys, g: groups } satisfies Message), keys.length, ...keys, ...groups],
            deadlineMs,
            'despite-overdue',
          );
    return sent.then(
      (reached) => {
        this.#metrics.invalidation('sent');
        return typeof reached === 'number' ? reached : null;
      },
      () => {
        // Nothing is queued once the bus is closed (shutdown): nothing to count either.
        if (!again && !this.#closed) this.#metrics.invalidation('queued');
        this.#queue(keys, groups);
        return null;
      },
    );
  }

  /**
   * Is an invalidation Redis did not take still waiting (queued, or being sent again)? Until it is
   * taken, Redis may still hold entries it drops, older than a write this instance answered: the
   * shared tier is not read meanwhile (cache-tier.ts).
   */
  get pending(): boolean {
    return this.#retry !== null || this.#resending > 0;
  }

  close(): void {
    this.#closed = true;
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#retry = null;
  }

  #received(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (!isMessage(message)) return;
    if (message.o === this.#origin) {
      if (message.n !== undefined) this.#echoes.get(message.n)?.();
      return;
    }
    this.#metrics.invalidation('received');
    if (message.k === undefined) this.#cache()?.clear();
    else this.#cache()?.invalidate(message.k, message.g ?? []);
  }

  #subscribed(): void {
    // Whatever was cached before this subscription was made may have been invalidated by another
    // instance meanwhile, unseen: dropped. That includes the first one, as an instance serves from
    // the moment it listens, before its subscription is made (a few ms when Redis is there at once;
    // then this finds nothing or next to nothing to drop, and says nothing).
    const dropped = this.#cache()?.clear() ?? 0;
    this.hearing.resynced();
    const first = this.#subscriptions++ === 0;
    if (first && !this.#link.everDown) return;
    this.#metrics.resync();
    // The first subscription of an instance that started while Redis was down lost nothing: it
    // had none; saying so would send an operator looking for an outage in between.
    const what = first
      ? 'the invalidation subscription is made at last (Redis was unavailable at start)'
      : 'the invalidation subscription was lost and is back';
    this.#logger.warn(`redis: ${what}; the local cache was cleared (invalidations sent meanwhile were missed)`, { event: 'redis', dropped });
  }

  #queue(keys: readonly string[] | null, groups: readonly string[]): void {
    if (this.#closed) return;
    if (keys === null) this.#queuedAll = true;
    else {
      for (const key of keys) this.#queuedKeys.add(key);
      for (const group of groups) this.#queuedGroups.add(group);
      if (this.#queuedKeys.size + this.#queuedGroups.size > MAX_QUEUED_NAMES) this.#queuedAll = true;
    }
    if (this.#queuedAll) {
      this.#queuedKeys = new Set();
      this.#queuedGroups = new Set();
    }
    this.#retry ??= setTimeout(() => this.#flush(), RETRY_MS).unref();
  }

  /** Sends what is queued again, as one message (failing, it is queued again). */
  #flush(): void {
    this.#retry = null;
    const all = this.#queuedAll;
    const keys = [...this.#queuedKeys];
    const groups = [...this.#queuedGroups];
    this.#queuedAll = false;
    this.#queuedKeys = new Set();
    this.#queuedGroups = new Set();
    if (!all && keys.length === 0 && groups.length === 0) return;
    this.#resending++;
    void this.#send(all ? null : keys, groups, this.#link.timeoutMs * 10, true).finally(() => this.#resending--);
  }
}
