import { setTimeout as sleep } from 'node:timers/promises';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import type { HgError } from '../lib/errors.ts';
import { decodeEntry, encodeEntry } from './entry-codec.ts';
import type { RedisLink } from './redis-link.ts';
import type { RedisMetrics } from './redis-metrics.ts';
import { TIER_READ, TIER_WRITE, UNLOCK } from './scripts.ts';

/** How often an instance waiting for another's fetch looks for its entry, ms. */
const HERD_POLL_MS = 20;

/** What the tier needs of a read route's source: the 404 a shared absence answers with. */
export interface AbsenceSource {
  notFound(): HgError;
}

/** What a tier read found: an entry, or none (and whether another instance is fetching it); `since` dates it in Redis ms. */
interface Found {
  readonly since: number;
  readonly entry: CacheEntry | null;
  readonly locked: boolean;
}

export interface TierTimes {
  /** The longest an instance waits for another's fetch: the upstream deadline, ms. */
  readonly waitMs: number;
  /** How long the herd lock lives if its holder never releases it (it died), ms. */
  readonly lockMs: number;
}

/**
 * The second cache tier, in Redis, between a local miss and the upstream. A miss asks Redis first
 * (within redis.timeoutMs; a failure or a late answer is a plain miss). When Redis has nothing,
 * one instance takes a short lock (SET NX PX, with its id as owner) and fetches; the others look
 * for its entry every 20 ms until it is there, the lock is gone (its holder finished without an
 * entry to share, or died and the lock expired), Redis fails, or the upstream deadline passes, and
 * then fetch themselves. What a load stored in the local cache is written to Redis with its
 * remaining lifetime as the TTL, in the background (never on a hit), unless an invalidation came
 * after the load began (scripts.ts, TIER_WRITE). While an invalidation of this instance waits to be
 * sent again (Redis did not take it), the tier is not read: a local miss goes to the upstream.
 */
export class CacheTier {
  readonly #link: RedisLink;
  readonly #cache: ResponseCache;
  readonly #clock: Clock;
  readonly #metrics: RedisMetrics;
  readonly #owner: string;
  readonly #times: TierTimes;
  /** True while an invalidation of this instance waits to be taken by Redis (InvalidationBus.pending). */
  readonly #held: () => boolean;

  constructor(link: RedisLink, cache: ResponseCache, clock: Clock, metrics: RedisMetrics, owner: string, times: TierTimes, held: () => boolean) {
    this.#held = held;
    this.#link = link;
    this.#cache = cache;
    this.#clock = clock;
    this.#metrics = metrics;
    this.#owner = owner;
    this.#times = times;
  }

  /**
   * The entry for `path` from Redis, from another instance's fetch, or from `fetch` (the
   * upstream, which stores it in the local cache). `ticket` is the local load's; `vary` this
   * instance's Vary. A shared absence throws the source's 404, as a local one does.
   */
  async load(path: string, ticket: number, vary: string, source: AbsenceSource, fetch: () => Promise<CacheEntry>): Promise<CacheEntry> {
    // While an invalidation this instance made has not reached Redis, Redis may still hold what it
    // drops, older than a write answered here: the tier is not read until it has.
    const found = this.#held() ? null : await this.#read(path, vary);
    if (found === null || (found.entry !== null && this.#held())) {
      this.#metrics.tier('unavailable');
      return fetch();
    }
    if (found.entry !== null) {
      this.#metrics.tier('hit');
      return this.#adopt(path, found.entry, ticket, source);
    }
    this.#metrics.tier('miss');
    const lock = found.locked ? 'taken' : await this.#lock(path);
    if (lock === 'taken') {
      const entry = await this.#await(path, vary);
      if (entry !== null && !this.#held()) {
        this.#metrics.tier('waited');
        return this.#adopt(path, entry, ticket, source);
      }
    }
    const before = this.#cache.get(path);
    try {
      return await fetch();
    } finally {
      // What the load stored (an entry, or a cached absence) is shared; then the lock goes.
      this.#share(path, before, found.since);
      if (lock === 'mine') this.#link.script('lock', UNLOCK, [], [this.#key('l:', path), this.#owner]).catch(() => {});
    }
  }

  #key(kind: string, path: string): string {
    return `${this.#link.prefix}${kind}${path}`;
  }

  /** One tier read; null when Redis did not answer in time. */
  async #read(path: string, vary: string): Promise<Found | null> {
    let answer: unknown;
    try {
      answer = await this.#link.script('tier_read', TIER_READ, [], [this.#link.prefix, path]);
    } catch {
      return null;
    }
    if (!Array.isArray(answer)) return null;
    const [since, value] = answer as [unknown, unknown];
    if (typeof since !== 'number') return null;
    if (typeof value === 'string') {
      const entry = decodeEntry(value, since, this.#clock.now(), vary);
      return { since, entry, locked: false };
    }
    return { since, entry: null, locked: value === 1 };
  }

  /** 'mine' when this instance now fetches for everyone; 'taken' when another one does; 'none' when Redis did not say. */
  async #lock(path: string): Promise<'mine' | 'taken' | 'none'> {
    try {
      const ok = await this.#link.call('lock', (client) => client.set(this.#key('l:', path), this.#owner, 'PX', this.#times.lockMs, 'NX'));
      return ok === 'OK' ? 'mine' : 'taken';
    } catch {
      return 'none';
    }
  }

  /** Waits for another instance's fetch: its entry, or null once there is no reason to wait longer. */
  async #await(path: string, vary: string): Promise<CacheEntry | null> {
    const deadline = this.#clock.now() + this.#times.waitMs;
    // Bounded by the deadline, and by count in case the clock does not move.
    for (let polls = Math.ceil(this.#times.waitMs / HERD_POLL_MS); polls > 0 && this.#clock.now() < deadline; polls--) {
      await sleep(HERD_POLL_MS);
      const found = await this.#read(path, vary);
      if (found === null || found.entry !== null) return found?.entry ?? null;
      if (!found.locked) return null;
    }
    return null;
  }

  /** Stores a shared entry locally as a load of this instance would (unless invalidated since `ticket`). */
  #adopt(path: string, entry: CacheEntry, ticket: number, source: AbsenceSource): CacheEntry {
    this.#cache.setIfCurrent(path, entry, ticket);
    if (entry.absent) throw source.notFound();
    return entry;
  }

  /** Writes what the load put in the local cache (if anything new) to Redis, in the background. */
  #share(path: string, before: CacheEntry | undefined, since: number): void {
    const after = this.#cache.get(path);
    if (after === undefined || after === before) return;
    const now = this.#clock.now();
    const payload = encodeEntry(after, now);
    if (payload === null) return;
    const ttl = Math.ceil(after.expiresAtMs - now);
    this.#link.script('tier_write', TIER_WRITE, [], [this.#link.prefix, path, since, ttl, payload, ...after.groups]).then(
      (stored) => {
        if (stored === 1) this.#metrics.tier('stored');
      },
      () => {},
    );
  }
}
