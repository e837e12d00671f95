import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.ts';
import type { IdempotencyBegin, IdempotencyStore, IdempotentAnswer } from './idempotency.ts';
import { recordId } from './idempotency.ts';
import { RedisUnavailable, type RedisLink } from './redis-link.ts';
import type { RedisMetrics } from './redis-metrics.ts';
import { IDEMPOTENCY_ABANDON, IDEMPOTENCY_BEGIN, IDEMPOTENCY_COMPLETE } from './scripts.ts';

/** Abandoning comes after the answer is known: it may wait this many times redis.timeoutMs. */
const AFTER_ANSWER_FACTOR = 10;
/** The longest pause between two tries to store a final answer, ms (the first is 50 ms, then doubling). */
const MAX_RETRY_PAUSE_MS = 500;

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

function isAnswer(value: unknown): value is IdempotentAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const a = value as Record<string, unknown>;
  const headers = a['headers'];
  return (
    typeof a['status'] === 'number' &&
    typeof a['body'] === 'string' &&
    typeof headers === 'object' &&
    headers !== null &&
    Object.values(headers).every((v) => typeof v === 'string')
  );
}

/**
 * Idempotency records in Redis, so a retry that lands on another instance is replayed and a
 * concurrent one there gets 409. Each decision is one script (scripts.ts); a record is
 * "p\n<fingerprint>" while its request runs (for the lease) and "c\n<fingerprint>\n<answer JSON>"
 * once it finished (for its TTL). Names and fingerprints are hashed: a key's length is bounded
 * whatever the client sent. When Redis does not answer in time `begin` says "unavailable".
 *
 * A final answer is owed: until it is stored, the key stays "in progress" and then lapses, and a
 * retry makes the change again. So `complete` passes the link's refusals for a request's own calls
 * (an earlier call overdue, the breaker open: other calls being slow says nothing of this one) and
 * is tried again until Redis answers or the claim's lease runs out; one that could not be stored
 * is counted (hypergate_idempotency_unstored_total) and logged.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #link: RedisLink;
  readonly #leaseMs: number;
  readonly #metrics: RedisMetrics;
  readonly #logger: Logger;

  constructor(link: RedisLink, leaseMs: number, metrics: RedisMetrics, logger: Logger) {
    this.#link = link;
    this.#leaseMs = leaseMs;
    this.#metrics = metrics;
    this.#logger = logger;
  }

  #key(subject: string, key: string): string {
    return `${this.#link.recordPrefix}idem:${digest(recordId(subject, key))}`;
  }

  async begin(subject: string, key: string, fingerprint: string, ttlSeconds: number): Promise<IdempotencyBegin> {
    let answer: unknown;
    try {
      answer = await this.#link.script(
        'idempotency',
        IDEMPOTENCY_BEGIN,
        [this.#key(subject, key)],
        [this.#key(subject, key), digest(fingerprint), Math.min(this.#leaseMs, ttlSeconds * 1000)],
      );
    } catch {
      return { state: 'unavailable' };
    }
    const [state, stored] = Array.isArray(answer) ? (answer as [unknown, unknown]) : [null, null];
    if (state === 'new' || state === 'in-progress' || state === 'mismatch') return { state };
    if (state === 'completed' && typeof stored === 'string') {
      try {
        const parsed: unknown = JSON.parse(stored);
        if (isAnswer(parsed)) return { state: 'completed', answer: parsed };
      } catch {
        // not ours: as unreadable as no answer
      }
    }
    return { state: 'unavailable' };
  }

  async complete(
    subject: string,
    key: string,
    fingerprint: string,
    answer: IdempotentAnswer,
    ttlSeconds: number,
    claimedAt = performance.now(),
  ): Promise<void> {
    const args = [this.#key(subject, key), digest(fingerprint), JSON.stringify(answer), ttlSeconds * 1000];
    const leaseEnds = claimedAt + this.#leaseMs;
    let why = 'the lease ran out';
    for (let attempt = 0; ; attempt++) {
      const left = leaseEnds - performance.now();
      // Tried at least once, with a deadline of its own, however late.
      if (attempt > 0 && left <= 0) break;
      try {
        await this.#link.script('idempotency', IDEMPOTENCY_COMPLETE, [this.#key(subject, key)], args, Math.max(left, this.#link.timeoutMs), 'despite-breaker');
        return;
      } catch (err) {
        if (err instanceof RedisUnavailable && err.reason === 'closed') {
          why = 'the gateway is shutting down';
          break;
        }
        why = err instanceof RedisUnavailable ? `redis ${err.reason}` : (err as Error).message;
      }
      const pause = Math.min(50 * 2 ** attempt, MAX_RETRY_PAUSE_MS, leaseEnds - performance.now());
      if (pause > 0) await sleep(pause, undefined, { ref: false });
    }
    this.#metrics.unstored();
    this.#logger.warn('idempotency: the final answer of a write could not be stored; a retry with its key may make the change again', {
      event: 'idempotency',
      cause: why,
    });
  }

  async abandon(subject: string, key: string, fingerprint: string): Promise<void> {
    const args = [this.#key(subject, key), digest(fingerprint)];
    await this.#link
      .script('idempotency', IDEMPOTENCY_ABANDON, [this.#key(subject, key)], args, this.#link.timeoutMs * AFTER_ANSWER_FACTOR, 'despite-breaker')
      .catch(() => {});
  }
}
