import { createHash } from 'node:crypto';
import type { IdempotencyBegin, IdempotencyStore, IdempotentAnswer } from './idempotency.ts';
import { recordId } from './idempotency.ts';
import type { RedisLink } from './redis-link.ts';
import { IDEMPOTENCY_ABANDON, IDEMPOTENCY_BEGIN, IDEMPOTENCY_COMPLETE } from './scripts.ts';

/** Completing and abandoning come after the answer is known: they may wait this many times redis.timeoutMs. */
const AFTER_ANSWER_FACTOR = 10;

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
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #link: RedisLink;
  readonly #leaseMs: number;

  constructor(link: RedisLink, leaseMs: number) {
    this.#link = link;
    this.#leaseMs = leaseMs;
  }

  #key(subject: string, key: string): string {
    return `${this.#link.prefix}idem:${digest(recordId(subject, key))}`;
  }

  async begin(subject: string, key: string, fingerprint: string, ttlSeconds: number): Promise<IdempotencyBegin> {
    let answer: unknown;
    try {
      answer = await this.#link.script('idempotency', IDEMPOTENCY_BEGIN, [], [this.#key(subject, key), digest(fingerprint), Math.min(this.#leaseMs, ttlSeconds * 1000)]);
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

  async complete(subject: string, key: string, fingerprint: string, answer: IdempotentAnswer, ttlSeconds: number): Promise<void> {
    const args = [this.#key(subject, key), digest(fingerprint), JSON.stringify(answer), ttlSeconds * 1000];
    await this.#link.script('idempotency', IDEMPOTENCY_COMPLETE, [], args, this.#link.timeoutMs * AFTER_ANSWER_FACTOR).catch(() => {});
  }

  async abandon(subject: string, key: string, fingerprint: string): Promise<void> {
    const args = [this.#key(subject, key), digest(fingerprint)];
    await this.#link.script('idempotency', IDEMPOTENCY_ABANDON, [], args, this.#link.timeoutMs * AFTER_ANSWER_FACTOR).catch(() => {});
  }
}
