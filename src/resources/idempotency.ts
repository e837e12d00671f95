import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import type { IdempotencyConfig } from '../config/types.ts';

/** A final answer as it is replayed: status, the headers that describe it, and the body. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

/** What a request with an Idempotency-Key finds (draft-ietf-httpapi-idempotency-key-header section 2.6). */
export type Begin =
  | { readonly kind: 'new' }
  | { readonly kind: 'in-progress' }
  | { readonly kind: 'completed'; readonly answer: StoredAnswer }
  | { readonly kind: 'mismatch' };

/**
 * Idempotency records per (scope, key): the fingerprint of the first request and, once it is
 * final, its answer. In this process's memory (lru-cache, bounded by idempotency.maxEntries);
 * an implementation on shared state keeps them for every instance.
 */
export interface IdempotencyStore {
  /** Claims the key for this fingerprint (new), or says what is there. `pendingMs` bounds an unfinished claim. */
  begin(scope: string, key: string, fingerprint: string, pendingMs: number): Promise<Begin>;
  /** The claimed request's final answer, kept for idempotency.ttlSeconds. */
  complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer): Promise<void>;
  /** Forgets an unfinished claim (the outcome is unknown): a retry may run again. */
  abandon(scope: string, key: string): Promise<void>;
}

/** The request a key was first used for: method, path and the exact body bytes. */
export function fingerprintOf(method: string, path: string, body: Buffer | undefined): string {
  const hash = createHash('sha256').update(`${method} ${path}\n`);
  if (body !== undefined) hash.update(body);
  return hash.digest('base64url');
}

interface Record {
  readonly fingerprint: string;
  readonly answer: StoredAnswer | null;
  readonly expiresAtMs: number;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #records: LRUCache<string, Record>;
  readonly #ttlMs: number;
  readonly #clock: Clock;

  constructor(config: IdempotencyConfig, clock: Clock) {
    this.#records = new LRUCache<string, Record>({ max: config.maxEntries });
    this.#ttlMs = config.ttlSeconds * 1000;
    this.#clock = clock;
  }

  async begin(scope: string, key: string, fingerprint: string, pendingMs: number): Promise<Begin> {
    const id = `${scope}\u0000${key}`;
    const now = this.#clock.now();
    const found = this.#records.get(id);
    if (found === undefined || found.expiresAtMs <= now) {
      this.#records.set(id, { fingerprint, answer: null, expiresAtMs: now + pendingMs });
      return { kind: 'new' };
    }
    if (found.fingerprint !== fingerprint) return { kind: 'mismatch' };
    return found.answer === null ? { kind: 'in-progress' } : { kind: 'completed', answer: found.answer };
  }

  async complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer): Promise<void> {
    this.#records.set(`${scope}\u0000${key}`, { fingerprint, answer, expiresAtMs: this.#clock.now() + this.#ttlMs });
  }

  async abandon(scope: string, key: string): Promise<void> {
    this.#records.delete(`${scope}\u0000${key}`);
  }
}
