import { randomBytes } from 'node:crypto';
import { consumerOf, consumerProblem, type Consumer } from '../auth/api-keys/consumer.ts';
import { apiKeyHash, isApiKeyHash, newApiKey } from '../auth/api-keys/key-format.ts';
import { ApiKeyStoreUnavailable, type ApiKeyRecord, type ApiKeyStore, type IssuedApiKey } from '../auth/api-keys/store.ts';
import type { Clock } from '../lib/clock.ts';
import { GrowingLru } from '../lib/growing-lru.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { RedisClient } from './redis-clients.ts';
import type { RedisLink } from './redis-link.ts';

/**
 * How long an answer of Redis about a key is used without asking again, ms: the longest a
 * revocation whose message an instance missed (its subscription was down) can go unseen there.
 */
export const API_KEY_FRESH_MS = 1000;
/** Keys whose last answer is held in memory; past it the least recently used is forgotten (it is asked again). */
const MAX_KNOWN_KEYS = 100_000;

/** What Redis said about one key hash, and when. */
interface Known {
  readonly record: ApiKeyRecord | null;
  readonly atMs: number;
}

/** A record as the index keeps it: with the hash, so the key can be revoked by id. */
interface Indexed extends ApiKeyRecord {
  readonly hash: string;
}

/** A stored record read back; null when it is not one (written by something else): such a key does not work. */
function parseRecord(text: string): Indexed | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v['id'] !== 'string' || typeof v['createdAtMs'] !== 'number') return null;
  if (v['expiresAtMs'] !== null && typeof v['expiresAtMs'] !== 'number') return null;
  if (consumerProblem(v['consumer'], v['scopes'], v['claims'], v['plan']) !== null) return null;
  const consumer = consumerOf(v['consumer'] as string, v['scopes'], v['claims'], v['plan']);
  const record: ApiKeyRecord = { id: v['id'], ...consumer, createdAtMs: v['createdAtMs'], expiresAtMs: v['expiresAtMs'] };
  return { ...record, hash: typeof v['hash'] === 'string' ? v['hash'] : '' };
}

/** A record as the request path reads it: no hash (it is the lookup's key). */
function withoutHash(indexed: Indexed): ApiKeyRecord {
  const { hash: _hash, ...record } = indexed;
  return record;
}

/**
 * API keys in Redis (auth.apiKeys.redis), shared by every instance of one redis.keyPrefix:
 * `<prefix>api-key:<sha256>` holds a key's record (a rotated key's expires with its overlap), the
 * hash `<prefix>api-keys` lists them by id for the admin API, and a revocation is published on
 * `<prefix>api-key-revoked`.
 *
 * A lookup on a request's path is answered from memory while Redis's answer is under 1 s old
 * (API_KEY_FRESH_MS), else asked again with the link's deadline (one call per key at a time). A
 * revocation reaches every instance by its message at once, and at the latest when its answer here
 * is 1 s old. While Redis cannot answer, the last answer about a key stands, however old: known keys
 * keep working through an outage, and a key never seen here waits for Redis (503).
 */
export class RedisApiKeyStore implements ApiKeyStore {
  readonly #link: RedisLink;
  readonly #clock: Clock;
  /** The deadline of admin calls, ms (not on a request's path: redis.connectTimeoutMs). */
  readonly #adminDeadlineMs: number;
  readonly #known = new GrowingLru<string, Known>(MAX_KNOWN_KEYS);
  readonly #asking = new SingleFlight<ApiKeyRecord | null>();
  #subscribed = false;

  constructor(link: RedisLink, clock: Clock, adminDeadlineMs: number) {
    this.#link = link;
    this.#clock = clock;
    this.#adminDeadlineMs = adminDeadlineMs;
  }

  find(hash: string): ApiKeyRecord | null | Promise<ApiKeyRecord | null> {
    this.listen();
    const known = this.#known.get(hash);
    if (known !== undefined && this.#clock.now() - known.atMs < API_KEY_FRESH_MS) return known.record;
    return this.#asking.run(hash, () => this.#ask(hash));
  }

  async create(consumer: Consumer, prefix: string): Promise<IssuedApiKey> {
    const key = newApiKey(prefix);
    const hash = apiKeyHash(key);
    const record: ApiKeyRecord = {
      id: randomBytes(12).toString('base64url'),
      consumer: consumer.consumer,
      scopes: consumer.scopes,
      claims: consumer.claims,
      plan: consumer.plan,
      createdAtMs: this.#clock.now(),
      expiresAtMs: null,
    };
    const text = JSON.stringify(record);
    await this.#admin((c) =>
      c
        .multi()
        .set(this.#keyOf(hash), text)
        .hset(this.#index, record.id, JSON.stringify({ ...record, hash }))
        .exec(),
    );
    this.#known.set(hash, { record, atMs: this.#clock.now() });
    return { key, record };
  }

  async list(): Promise<readonly ApiKeyRecord[]> {
    const all = await this.#admin((c) => c.hgetall(this.#index));
    const now = this.#clock.now();
    const records: ApiKeyRecord[] = [];
    const gone: string[] = [];
    for (const [id, text] of Object.entries(all)) {
      const indexed = parseRecord(text);
      if (indexed !== null && (indexed.expiresAtMs === null || indexed.expiresAtMs > now)) records.push(withoutHash(indexed));
      else if (indexed !== null) gone.push(id);
    }
    // Rotated keys past their overlap: their records expired by themselves; their index entries go now.
    if (gone.length > 0) await this.#admin((c) => c.hdel(this.#index, ...gone)).catch(() => {});
    return records.sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
  }

  async revoke(id: string): Promise<boolean> {
    const indexed = await this.#indexed(id);
    if (indexed === null) return false;
    const hash = indexed.hash;
    await this.#admin((c) => c.multi().del(this.#keyOf(hash)).hdel(this.#index, id).publish(this.#channel, hash).exec());
    this.#known.set(hash, { record: null, atMs: this.#clock.now() });
    return true;
  }

  async rotate(id: string, overlapSeconds: number, prefix: string): Promise<IssuedApiKey | null> {
    const indexed = await this.#indexed(id);
    if (indexed === null) return null;
    const issued = await this.create(indexed, prefix);
    if (overlapSeconds === 0) {
      await this.revoke(id);
      return issued;
    }
    const overlapMs = overlapSeconds * 1000;
    const expiresAtMs = this.#clock.now() + overlapMs;
    const old = { ...withoutHash(indexed), expiresAtMs };
    // Other instances see the end of the overlap within 1 s (their answers are asked again), and
    // past it the record is gone from Redis.
    await this.#admin((c) =>
      c
        .multi()
        .set(this.#keyOf(indexed.hash), JSON.stringify(old), 'PX', overlapMs)
        .hset(this.#index, id, JSON.stringify({ ...old, hash: indexed.hash }))
        .exec(),
    );
    this.#known.set(indexed.hash, { record: old, atMs: this.#clock.now() });
    return issued;
  }

  get #index(): string {
    return `${this.#link.prefix}api-keys`;
  }

  get #channel(): string {
    return `${this.#link.prefix}api-key-revoked`;
  }

  #keyOf(hash: string): string {
    return `${this.#link.prefix}api-key:${hash}`;
  }

  async #indexed(id: string): Promise<Indexed | null> {
    const text = await this.#admin((c) => c.hget(this.#index, id));
    const indexed = text === null ? null : parseRecord(text);
    return indexed !== null && isApiKeyHash(indexed.hash) ? indexed : null;
  }

  async #ask(hash: string): Promise<ApiKeyRecord | null> {
    try {
      const text = await this.#link.call('api_key', (c) => c.get(this.#keyOf(hash)));
      const indexed = text === null ? null : parseRecord(text);
      const record = indexed === null ? null : withoutHash(indexed);
      this.#known.set(hash, { record, atMs: this.#clock.now() });
      return record;
    } catch (err) {
      // The last answer about this key stands while Redis cannot give one.
      const known = this.#known.get(hash);
      if (known !== undefined) return known.record;
      throw new ApiKeyStoreUnavailable((err as Error).message);
    }
  }

  /** An admin call, within its own (longer) deadline; Redis away is ApiKeyStoreUnavailable. */
  async #admin<T>(run: (client: RedisClient) => Promise<T>): Promise<T> {
    try {
      return await this.#link.call('api_key', run, this.#adminDeadlineMs, 'despite-overdue');
    } catch (err) {
      throw new ApiKeyStoreUnavailable((err as Error).message);
    }
  }

  /** Subscribes to revocations (once): when a pipeline takes keys from Redis, and with the first lookup at the latest. */
  listen(): void {
    if (this.#subscribed) return;
    this.#subscribed = true;
    this.#link.subscribe(
      this.#channel,
      (hash) => {
        if (isApiKeyHash(hash)) this.#known.set(hash, { record: null, atMs: this.#clock.now() });
      },
      () => {},
      () => {},
    );
  }
}
