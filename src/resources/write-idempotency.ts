import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { HgError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import { problemRecord } from '../protocol/problem.ts';
import type { IdempotencyStore, IdempotentAnswer } from '../cluster/idempotency.ts';

/**
 * Upstream refusals whose outcome is known (the change was not made, and would not be on a
 * retry): kept under an Idempotency-Key and replayed. Anything else (a 5xx, an answer we do not
 * understand) leaves the outcome unknown, and a retry runs again.
 */
const FINAL_REFUSALS: ReadonlySet<number> = new Set([404, 409, 412, 422, 428, 400]);

/** Is the upstream's refusal with this status a final outcome (kept and replayed under an Idempotency-Key)? */
export function isFinalRefusal(status: number): boolean {
  return FINAL_REFUSALS.has(status);
}

/** The request a key was first used for: method, path and the exact body bytes. */
export function fingerprintOf(method: string, path: string, body: Buffer | undefined): string {
  const hash = createHash('sha256').update(`${method} ${path}\n`);
  if (body !== undefined) hash.update(body);
  return hash.digest('base64url');
}

/** Who an Idempotency-Key belongs to within one realm: the token's subject, or (no `sub`) the token itself (the Authorization header, hashed). */
export function idempotencyScope(authorization: string | undefined, subject: string | undefined): string {
  if (subject !== undefined) return `sub:${subject}`;
  return `token:${createHash('sha256')
    .update(authorization ?? '')
    .digest('base64url')}`;
}

/**
 * Who an Idempotency-Key belongs to across gateways sharing the records (one redis.keyPrefix):
 * the realm (key source and required issuer, auth/realm.ts), the token's issuer, and the scope
 * within them. Two tenants' `alice` never share a record.
 */
export function realmScope(realm: string, issuer: string | undefined, scope: string): string {
  return JSON.stringify([realm, issuer ?? null, scope]);
}

/** What a claim without a store has to wait for: nothing. */
const DONE: Promise<void> = Promise.resolve();

/** A write sent with an Idempotency-Key: whose key it is, the key, the request's fingerprint, and how long its answer is kept. */
export interface KeyedWrite {
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly ttlSeconds: number;
}

/**
 * A write's hold on its Idempotency-Key, told the write's outcome once it is known. Whether this
 * request holds the key's record ('new'), may hold it ('unavailable': the shared store did not
 * answer in time, and its claim may yet have been made there), or has none (no key).
 *
 * An answer whose outcome is unknown (a time-out, a reset, a 5xx) is not final: a retry runs
 * again, so our claim is dropped; one we only may have made is left to its lease, as dropping it
 * could drop another request's. A final answer is kept in both cases: a claim that reached Redis
 * late would otherwise hold the key "in progress" (409) and then lapse, letting a retry make the
 * change twice; with no claim there, it is stored all the same (unless the key already holds a
 * final answer, or a record of another request body).
 * Keeping the record is not waited for: a store that fails or is slow never changes or delays the
 * answer. It is asked before the answer is written, so a retry that follows the answer finds the
 * record, and the Redis store keeps trying until the claim's lease runs out (redis-idempotency.ts).
 */
export class IdempotencyClaim {
  /** No Idempotency-Key: the outcome is kept nowhere. */
  static readonly NONE = new IdempotencyClaim(null, null, null, 0);

  readonly #store: IdempotencyStore | null;
  readonly #write: KeyedWrite | null;
  readonly #state: 'new' | 'unavailable' | null;
  /** performance.now() when the claim was asked for: its lease runs from then. */
  readonly #claimedAt: number;

  private constructor(store: IdempotencyStore | null, write: KeyedWrite | null, state: 'new' | 'unavailable' | null, claimedAt: number) {
    this.#store = store;
    this.#write = write;
    this.#state = state;
    this.#claimedAt = claimedAt;
  }

  /**
   * Claims the key for this write. Returns the claim, or the answer to replay when a request with
   * the same fingerprint already finished; a request with the key still running is a 409, a key
   * used for another request a 422. When the shared store does not answer in time the write goes
   * on unprotected rather than fail (a warning is logged).
   */
  static async begin(store: IdempotencyStore, write: KeyedWrite | null, logger: Logger, requestId: string): Promise<IdempotencyClaim | IdempotentAnswer> {
    if (write === null) return IdempotencyClaim.NONE;
    const claimedAt = performance.now();
    const begun = await store.begin(write.scope, write.key, write.fingerprint, write.ttlSeconds);
    switch (begun.state) {
      case 'completed':
        return begun.answer;
      case 'in-progress':
        throw new HgError('HG_ERR_IDEMPOTENCY_KEY_IN_USE');
      case 'mismatch':
        throw new HgError('HG_ERR_IDEMPOTENCY_KEY_REUSED');
      case 'unavailable':
        logger.warn('idempotency records unavailable: the write goes on without one', { reqId: requestId, event: 'idempotency' });
        return new IdempotencyClaim(store, write, 'unavailable', claimedAt);
      case 'new':
        return new IdempotencyClaim(store, write, 'new', claimedAt);
    }
  }

  /**
   * The outcome is known: `answer` is final, kept for retries with the same key. The promise
   * (never rejected) says when the store has it; a write does not wait for it.
   */
  final(answer: IdempotentAnswer): Promise<void> {
    const store = this.#store;
    const write = this.#write;
    if (store === null || write === null) return DONE;
    return store.complete(write.scope, write.key, write.fingerprint, answer, write.ttlSeconds, this.#claimedAt).catch(() => {});
  }

  /** The outcome is known and is this refusal: its problem answer is final. */
  refused(err: HgError): Promise<void> {
    return this.#store === null ? DONE : this.final(problemRecord(err));
  }

  /** The outcome is unknown (the upstream may or may not have made the change): a retry runs again. Never rejected, not waited for. */
  unknown(): Promise<void> {
    const store = this.#store;
    const write = this.#write;
    if (store === null || write === null || this.#state !== 'new') return DONE;
    return store.abandon(write.scope, write.key, write.fingerprint).catch(() => {});
  }

  /** The upstream refused with `status`, answered as `err`: final or unknown as isFinalRefusal says. */
  upstreamRefused(status: number, err: HgError): Promise<void> {
    return isFinalRefusal(status) ? this.refused(err) : this.unknown();
  }
}
