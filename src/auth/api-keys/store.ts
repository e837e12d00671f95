import type { Consumer } from './consumer.ts';

/** A key kept in a store (Redis): its consumer, an id to manage it by, and when it stops working (a rotated key). */
export interface ApiKeyRecord extends Consumer {
  readonly id: string;
  readonly createdAtMs: number;
  /** When the key stops working (the overlap of a rotation); null: until revoked. */
  readonly expiresAtMs: number | null;
}

/** Why a store could not answer (Redis unreachable, past its deadline): the request gets 503, never 401. */
export class ApiKeyStoreUnavailable extends Error {
  constructor(reason: string) {
    super(`API key store unavailable: ${reason}`);
    this.name = 'ApiKeyStoreUnavailable';
  }
}

/**
 * Keys looked up on a request's path, by the SHA-256 of the key: at once when the answer is held
 * in memory and recent, else a promise. Null: no such key. Throws (or rejects with)
 * ApiKeyStoreUnavailable when the store cannot answer and nothing is known of the key.
 */
export interface ApiKeyLookup {
  find(hash: string): ApiKeyRecord | null | Promise<ApiKeyRecord | null>;
}

/** A key just made: the key itself (shown once, kept nowhere) and its record. */
export interface IssuedApiKey {
  readonly key: string;
  readonly record: ApiKeyRecord;
}

/** Keys managed through the admin API (`/api-keys`). Every call rejects with ApiKeyStoreUnavailable when the store cannot answer. */
export interface ApiKeyAdmin {
  create(consumer: Consumer, prefix: string): Promise<IssuedApiKey>;
  /** Every key that still works, without the key or its hash. */
  list(): Promise<readonly ApiKeyRecord[]>;
  /** False when there is no such key. */
  revoke(id: string): Promise<boolean>;
  /** A new key for the same consumer; the old one keeps working `overlapSeconds` (0: revoked now). Null when there is no such key. */
  rotate(id: string, overlapSeconds: number, prefix: string): Promise<IssuedApiKey | null>;
}

/** A store of keys: what requests look up and what the admin API manages. */
export interface ApiKeyStore extends ApiKeyLookup, ApiKeyAdmin {}
