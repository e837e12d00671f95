import { GrowingLru } from '../lib/growing-lru.ts';
import { heldBytes } from '../cache/held-bytes.ts';
import type { Clock } from '../lib/clock.ts';
import { SubjectShares } from './subject-shares.ts';

/** The final answer of an idempotent request, as it is replayed (draft-ietf-httpapi-idempotency-key-header section 2.6). */
export interface IdempotentAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What `begin` found for a subject's key. */
export type IdempotencyBegin =
  /** Nobody used this key: it is now this request's (in progress). */
  | { readonly state: 'new' }
  /** A request with the same fingerprint holds it and has not finished: answer 409. */
  | { readonly state: 'in-progress' }
  /** A request with the same fingerprint finished: replay its answer. */
  | { readonly state: 'completed'; readonly answer: IdempotentAnswer }
  /** The key was used for another request (method, path or body differ): answer 422. */
  | { readonly state: 'mismatch' }
  /** The shared store did not answer in time: the caller decides (only the Redis store says this). */
  | { readonly state: 'unavailable' };

/**
 * Idempotency records per token subject and Idempotency-Key, with the request's fingerprint
 * (method, path and body, as the caller computes it). Memory (bounded by idempotency.maxEntries)
 * or Redis (each record with its TTL), so a retry on another instance is replayed.
 */
export interface IdempotencyStore {
  /**
   * Claims the key for a request, or says who has it. A claim that is never completed nor
   * abandoned lapses after the store's lease (the instance holding it may have died).
   */
  begin(subject: string, key: string, fingerprint: string, ttlSeconds: number): Promise<IdempotencyBegin>;
  /**
   * Stores the final answer of the request that claimed the key, for ttlSeconds. `claimedAt`
   * (performance.now() when the key was claimed) dates the claim: a store that cannot take the
   * answer at once keeps trying until the claim's lease has run out, and no longer.
   */
  complete(subject: string, key: string, fingerprint: string, answer: IdempotentAnswer, ttlSeconds: number, claimedAt?: number): Promise<void>;
  /** Forgets an unfinished claim (its outcome is unknown or it failed before anything was sent), so a retry may run. */
  abandon(subject: string, key: string, fingerprint: string): Promise<void>;
}

type MemoryRecord = { readonly subject: string; readonly fingerprint: string; readonly answer: IdempotentAnswer | null };

/** What a record costs besides its answer's body and headers: its name, fingerprint and the LRU's bookkeeping, bytes (roughly). */
const RECORD_OVERHEAD_BYTES = 200;

function recordBytes(id: string, record: MemoryRecord): number {
  const answer = record.answer;
  if (answer === null) return RECORD_OVERHEAD_BYTES + id.length;
  let headers = 0;
  for (const name in answer.headers) headers += name.length + (answer.headers[name] as string).length;
  return RECORD_OVERHEAD_BYTES + id.length + headers + heldBytes(answer.body, Buffer.byteLength(answer.body));
}

/** The bounds of the records in this process (idempotency.*). */
export interface MemoryIdempotencyLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
  /** Most bytes one subject's records hold; absent: maxBytes (no bound of its own). */
  readonly maxBytesPerSubject?: number;
}

/**
 * The records in this process (no Redis): an LRU bounded by idempotency.maxEntries and by
 * idempotency.maxBytes (a record holds its whole answer, so a count alone would let large answers
 * grow the process without bound), each record with its TTL; and each subject's records by
 * idempotency.maxBytesPerSubject, so one subject's many large answers evict its own oldest records
 * rather than everyone's (the least recently used of all go only when the total is full).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #records: GrowingLru<string, MemoryRecord>;
  readonly #leaseMs: number;
  readonly #shares: SubjectShares;

  constructor(limits: MemoryIdempotencyLimits, leaseMs: number, clock: Clock) {
    this.#leaseMs = leaseMs;
    this.#shares = new SubjectShares(limits.maxBytesPerSubject ?? limits.maxBytes);
    // TTLs run on the injected clock, so tests move time instead of sleeping.
    this.#records = new GrowingLru<string, MemoryRecord>(limits.maxEntries, {
      maxSize: limits.maxBytes,
      sizeCalculation: (record, id) => recordBytes(id, record),
      ttlAutopurge: false,
      ttlResolution: 0,
      perf: { now: () => clock.now() },
      // Replaced in place ('set'): #put has counted the new one already.
      dispose: (record, id, reason) => {
        if (reason !== 'set') this.#shares.dropped(record.subject, id);
      },
    });
  }

  /** Bytes one subject's records hold, as they are counted against idempotency.maxBytesPerSubject. */
  bytesOf(subject: string): number {
    return this.#shares.bytesOf(subject);
  }

  /** Stores a record, then evicts its subject's oldest ones past the subject's bound. */
  #put(id: string, record: MemoryRecord, ttlMs: number): void {
    this.#records.set(id, record, { ttl: ttlMs });
    // lru-cache refuses a record larger than the whole store: then there is nothing to count.
    if (this.#records.peek(id) !== record) return;
    this.#shares.wrote(record.subject, id, recordBytes(id, record));
    for (const old of this.#shares.overBy(record.subject)) this.#records.delete(old);
  }

  /** Bytes the records hold, as they are counted against idempotency.maxBytes. */
  get bytes(): number {
    return this.#records.calculatedSize;
  }

  get size(): number {
    return this.#records.size;
  }

  async begin(subject: string, key: string, fingerprint: string, ttlSeconds: number): Promise<IdempotencyBegin> {
    const id = recordId(subject, key);
    const record = this.#records.get(id);
    if (record === undefined) {
      this.#put(id, { subject, fingerprint, answer: null }, Math.min(this.#leaseMs, ttlSeconds * 1000));
      return { state: 'new' };
    }
    if (record.fingerprint !== fingerprint) return { state: 'mismatch' };
    return record.answer === null ? { state: 'in-progress' } : { state: 'completed', answer: record.answer };
  }

  async complete(subject: string, key: string, fingerprint: string, answer: IdempotentAnswer, ttlSeconds: number): Promise<void> {
    const id = recordId(subject, key);
    const record = this.#records.get(id);
    if (record !== undefined && (record.fingerprint !== fingerprint || record.answer !== null)) return;
    this.#put(id, { subject, fingerprint, answer }, ttlSeconds * 1000);
  }

  async abandon(subject: string, key: string, fingerprint: string): Promise<void> {
    const id = recordId(subject, key);
    const record = this.#records.get(id);
    if (record !== undefined && record.fingerprint === fingerprint && record.answer === null) this.#records.delete(id);
  }
}

/** One record's name: subject and key, unambiguous whatever characters they hold. */
export function recordId(subject: string, key: string): string {
  return JSON.stringify([subject, key]);
}
