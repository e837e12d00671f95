import { setTimeout as sleep } from 'node:timers/promises';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { Clock } from '../lib/clock.ts';
import type { HgError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import { errorTypeOf } from '../observability/traced-step.ts';
import type { RequestTrace } from '../observability/tracing.ts';
import { adoptable, type Expected } from './entry-adoption.ts';
import { encodeEntry, isRejection, parseEntry, type RejectReason, type Rejection } from './entry-codec.ts';
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
  /** The longest a shared absence may hold: cache.notFoundSeconds, ms. */
  readonly absenceMs: number;
}

/** What the tier is made of: the Redis link, this pipeline's cache, and how it reports. */
export interface TierParts {
  readonly link: RedisLink;
  readonly cache: ResponseCache;
  readonly clock: Clock;
  readonly metrics: RedisMetrics;
  readonly logger: Logger;
  /** This instance's name in herd locks. */
  readonly owner: string;
  readonly times: TierTimes;
  /** True while an invalidation of this instance waits to be taken by Redis (InvalidationBus.pending). */
  readonly held: () => boolean;
}

/** One local miss's question to the tier: the path and what this instance expects of its entry (entry-adoption.ts). */
export type TierRead = Omit<Expected, 'absenceMs'> & {
  /** The trace of the request that loads (tracing.enabled): its Redis calls are CLIENT spans under it. */
  readonly trace?: RequestTrace | undefined;
};

/** One Redis call of a request's load, as a CLIENT span when the request is traced (the conventions' database attributes). */
async function redisCall<T>(trace: RequestTrace | undefined, operation: string, call: () => Promise<T>): Promise<T> {
  if (trace === undefined) return call();
  const span = trace.call(`redis ${operation}`, { 'db.system.name': 'redis', 'db.operation.name': operation });
  try {
    const value = await call();
    span.end();
    return value;
  } catch (err) {
    span.end(errorTypeOf(err));
    throw err;
  }
}

/** Rejections that a rolling change of declarations or versions makes by the thousand: counted, logged only at debug. */
const EXPECTED_REJECTIONS: ReadonlySet<RejectReason> = new Set<RejectReason>(['declaration', 'version']);

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
 * What is read is checked before it is adopted (entry-adoption.ts): an entry that fails is dropped,
 * counted and logged, and the miss goes on as if the tier had none (its own fetch then replaces it).
 */
export class CacheTier {
  readonly #link: RedisLink;
  readonly #cache: ResponseCache;
  readonly #clock: Clock;
  readonly #metrics: RedisMetrics;
  readonly #logger: Logger;
  readonly #owner: string;
  readonly #times: TierTimes;
  readonly #held: () => boolean;

  constructor(parts: TierParts) {
    this.#link = parts.link;
    this.#cache = parts.cache;
    this.#clock = parts.clock;
    this.#metrics = parts.metrics;
    this.#logger = parts.logger;
    this.#owner = parts.owner;
    this.#times = parts.times;
    this.#held = parts.held;
  }

  /**
   * The entry for `read.path` from Redis, from another instance's fetch, or from `fetch` (the
   * upstream, which stores it in the local cache). `ticket` is the local load's. A shared absence
   * throws the source's 404, as a local one does.
   */
  async load(read: TierRead, ticket: number, source: AbsenceSource, fetch: () => Promise<CacheEntry>): Promise<CacheEntry> {
    const { path } = read;
    // While an invalidation this instance made has not reached Redis, Redis may still hold what it
    // drops, older than a write answered here: the tier is not read until it has.
    const found = this.#held() ? null : await this.#read(read);
    if (found === null || (found.entry !== null && this.#held())) {
      this.#metrics.tier('unavailable');
      return fetch();
    }
    if (found.entry !== null) {
      this.#metrics.tier('hit');
      return this.#adopt(path, found.entry, ticket, source);
    }
    this.#metrics.tier('miss');
    const lock = found.locked ? 'taken' : await redisCall(read.trace, 'lock', () => this.#lock(path));
    if (lock === 'taken') {
      const entry = await redisCall(read.trace, 'wait for entry', () => this.#await(read));
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
      this.#share(read, before, found.since);
      if (lock === 'mine') this.#link.script('lock', UNLOCK, [this.#key('l:', path)], [this.#key('l:', path), this.#owner]).catch(() => {});
    }
  }

  #key(kind: string, path: string): string {
    return `${this.#link.prefix}${kind}${path}`;
  }

  /** One tier read; null when Redis did not answer in time. An entry that is not adopted reads as none. */
  async #read(read: TierRead): Promise<Found | null> {
    let answer: unknown;
    try {
      answer = await redisCall(read.trace, 'tier_read', () => this.#link.script('tier_read', TIER_READ, [this.#link.slotKey], [this.#link.prefix, read.path]));
    } catch {
      return null;
    }
    if (!Array.isArray(answer)) return null;
    const [since, value] = answer as [unknown, unknown];
    if (typeof since !== 'number') return null;
    if (typeof value !== 'string') return { since, entry: null, locked: value === 1 };
    const record = parseEntry(value);
    const entry = isRejection(record) ? record : adoptable(record, { ...read, absenceMs: this.#times.absenceMs }, since, this.#clock.now());
    if (entry !== null && isRejection(entry)) {
      this.#rejected(read.path, entry);
      return { since, entry: null, locked: false };
    }
    return { since, entry, locked: false };
  }

  /** An entry not adopted: counted by reason, and logged (a warning unless a rolling change explains it). */
  #rejected(path: string, why: Rejection): void {
    this.#metrics.rejected(why.rejected);
    const fields = { event: 'shared-tier', path, reason: why.rejected, detail: why.detail };
    if (EXPECTED_REJECTIONS.has(why.rejected)) this.#logger.debug('shared cache entry not adopted', fields);
    else this.#logger.warn('shared cache entry not adopted: dropped, the upstream is asked instead', fields);
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
  async #await(read: TierRead): Promise<CacheEntry | null> {
    const deadline = this.#clock.now() + this.#times.waitMs;
    // Bounded by the deadline, and by count in case the clock does not move.
    for (let polls = Math.ceil(this.#times.waitMs / HERD_POLL_MS); polls > 0 && this.#clock.now() < deadline; polls--) {
      await sleep(HERD_POLL_MS);
      const found = await this.#read(read);
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
  #share(read: TierRead, before: CacheEntry | undefined, since: number): void {
    const { path } = read;
    const after = this.#cache.get(path);
    if (after === undefined || after === before) return;
    const now = this.#clock.now();
    const payload = encodeEntry(after, now, path, read.shape.fingerprint);
    if (payload === null) return;
    const ttl = Math.ceil(after.expiresAtMs - now);
    this.#link.script('tier_write', TIER_WRITE, [this.#link.slotKey], [this.#link.prefix, path, since, ttl, payload, ...after.groups]).then(
      (stored) => {
        if (stored === 1) this.#metrics.tier('stored');
      },
      () => {},
    );
  }
}
