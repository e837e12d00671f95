import type { LRUCache } from 'lru-cache';
import { GrowingLru } from '../lib/growing-lru.ts';
import type { Clock } from '../lib/clock.ts';
import type { RateLimitConfig } from '../config/types.ts';
import { HgError } from '../lib/errors.ts';
import type { IncomingMessage } from 'node:http';
import type { Principal } from './principal.ts';

/** What a limiter needs of rateLimit (tests build one from these alone). */
export type BucketConfig = Pick<RateLimitConfig, 'requestsPerSecond' | 'burst' | 'maxKeys'>;

/**
 * Decides whether one more request of a client may pass: null when it may, else the 429 to
 * answer. This process's buckets decide at once; a cluster-wide limit (src/cluster/) may need a
 * promise (it asks Redis).
 *
 * An address pays only for requests that fail authentication (charge); while it is over that
 * budget, refusing() says so at once, so its tokens not yet verified are refused before any crypto.
 */
export interface Limiter {
  /**
   * One request of a subject, or of an address when there is no subject: null, or the 429 once its
   * bucket is empty. `principal` (none for an anonymous caller) names its plan, and `req` is the
   * request whose answer carries the RateLimit fields of plans and limits per route; the limiter
   * without plans reads neither.
   */
  take(subject: string | undefined, address: string | undefined, principal?: Principal, req?: IncomingMessage): HgError | null | Promise<HgError | null>;
  /** The 429 while the address is over its budget for failed authentication, else null. Decided here and now, never waits. */
  refusing(address: string | undefined): HgError | null;
  /**
   * Charges one failed authentication to the address, even past an empty bucket: each failure that
   * was verified cost crypto, so concurrent failures are all paid for (the address waits longer).
   * Settles once the charge is recorded, so the client's next request sees it.
   */
  charge(address: string | undefined): void | Promise<void>;
}

/** The RateLimit-Policy value (draft section 3): q per w seconds is the sustained rate, w rounded up (section 3.1.3, which can only understate it). */
export function rateLimitPolicy(burst: number, perSecond: number, name = 'default'): string {
  return `"${name}";q=${burst};w=${Math.max(1, Math.ceil(burst / perSecond))}`;
}

/**
 * The 429 for a client that may try again in `waitSeconds` (whole seconds, at least 1: RFC 9110
 * section 10.2.3 delay-seconds); the draft's `t` says the same, so Retry-After does not point
 * before the end of the window (section 6).
 */
export function rateLimited(waitSeconds: number, policy: string, limit = `"default";r=0;t=${waitSeconds}`): HgError {
  return new HgError('HG_ERR_RATE_LIMITED', {
    detail: `Too many requests; try again in ${waitSeconds} s.`,
    headers: { 'Retry-After': String(waitSeconds), 'RateLimit-Policy': policy, RateLimit: limit },
  });
}

/** One client's token bucket: `tokens` left at `atMs`. Changed in place: a request allocates nothing. */
interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Token buckets per client, in this process's memory only (each instance limits on its own).
 * A bucket holds up to `burst` tokens, refills at `requestsPerSecond`, and each request takes
 * one; a failed authentication is charged even past empty (charge). As a cluster limit's fallback
 * it holds its share of the bucket (share()). Subjects and client addresses have separate, bounded maps (rateLimit.maxKeys each), so
 * a token's `sub` can never share a bucket with an address; the least recently seen key is
 * dropped first, which only ever gives that client a full bucket again.
 *
 * Over the limit the answer is 429 with Retry-After and the fields of
 * draft-ietf-httpapi-ratelimit-headers-11 (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/):
 * `RateLimit-Policy: "default";q=<quota>;w=<window s>` (section 3) and
 * `RateLimit: "default";r=<remaining>;t=<seconds>` (section 4). Successful answers carry
 * neither: their header lists are shared and pre-built (cache hits), and a per-request field
 * would cost a copy on every hit.
 */
export class RateLimiter implements Limiter {
  /** Refill per second and capacity: the whole bucket, or this instance's share of it (share()). */
  #perSecond: number;
  #burst: number;
  readonly #wholePerSecond: number;
  readonly #wholeBurst: number;
  readonly #clock: Clock;
  readonly #subjects: LRUCache<string, Bucket>;
  readonly #addresses: LRUCache<string, Bucket>;
  readonly #policy: string;

  /** null when rate limiting is off (requestsPerSecond null or 0): callers then skip it entirely. */
  static create(config: BucketConfig, clock: Clock): RateLimiter | null {
    const rate = config.requestsPerSecond;
    return rate === null || rate === 0 ? null : new RateLimiter(rate, config, clock);
  }

  private constructor(perSecond: number, config: BucketConfig, clock: Clock) {
    this.#perSecond = this.#wholePerSecond = perSecond;
    this.#burst = this.#wholeBurst = config.burst;
    this.#clock = clock;
    this.#subjects = new GrowingLru<string, Bucket>(config.maxKeys);
    this.#addresses = new GrowingLru<string, Bucket>(config.maxKeys);
    this.#policy = rateLimitPolicy(config.burst, perSecond);
  }

  /** Buckets held (subjects + addresses), for tests and metrics. */
  get size(): number {
    return this.#subjects.size + this.#addresses.size;
  }

  /**
   * Makes the buckets hold `1 / instances` of the burst and refill at that share of the rate: a
   * cluster limit's fallback, so instances deciding alone together pass no more than the limit.
   * The 429's RateLimit-Policy still states the whole limit, the one the client is held to.
   */
  share(instances: number): void {
    const n = Math.max(1, instances);
    this.#burst = this.#wholeBurst / n;
    this.#perSecond = this.#wholePerSecond / n;
  }

  /** Takes one request from the subject's bucket, or the address's when there is no subject; the 429 when empty. */
  take(subject: string | undefined, address: string | undefined): HgError | null {
    return subject === undefined ? this.#take(this.#addresses, address ?? '') : this.#take(this.#subjects, subject);
  }

  refusing(address: string | undefined): HgError | null {
    const bucket = this.#addresses.get(address ?? '');
    if (bucket === undefined) return null;
    const tokens = this.#refill(bucket, this.#clock.now());
    return tokens >= 1 ? null : this.#limited(tokens);
  }

  charge(address: string | undefined): void {
    this.chargeWaitMs(address);
  }

  /** charge(), answering the ms until the address may fail once more (0: its budget has a whole request left). */
  chargeWaitMs(address: string | undefined): number {
    const key = address ?? '';
    const now = this.#clock.now();
    const bucket = this.#addresses.get(key);
    const tokens = (bucket === undefined ? this.#burst : this.#refill(bucket, now)) - 1;
    if (bucket === undefined) this.#addresses.set(key, { tokens, atMs: now });
    else bucket.tokens = tokens;
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / this.#perSecond);
  }

  #take(buckets: LRUCache<string, Bucket>, key: string): HgError | null {
    const now = this.#clock.now();
    const bucket = buckets.get(key);
    if (bucket === undefined) {
      buckets.set(key, { tokens: this.#burst - 1, atMs: now });
      return null;
    }
    const tokens = this.#refill(bucket, now);
    if (tokens >= 1) {
      bucket.tokens = tokens - 1;
      return null;
    }
    return this.#limited(tokens);
  }

  /** The bucket's tokens now (it may be below 0: charged failures), written back. */
  #refill(bucket: Bucket, now: number): number {
    // A clock stepped back refills nothing rather than taking tokens away.
    const elapsed = now > bucket.atMs ? now - bucket.atMs : 0;
    const tokens = Math.min(this.#burst, bucket.tokens + (elapsed * this.#perSecond) / 1000);
    bucket.atMs = now;
    bucket.tokens = tokens;
    return tokens;
  }

  #limited(tokens: number): HgError {
    // Whole seconds until the next token.
    return rateLimited(Math.max(1, Math.ceil((1 - tokens) / this.#perSecond)), this.#policy);
  }
}
