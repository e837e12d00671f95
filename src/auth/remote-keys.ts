import { errors, type CryptoKey, type JWSHeaderParameters } from 'jose';
import type { Clock } from '../lib/clock.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { JwsAlgorithm } from '../config/types.ts';
import type { Logger } from '../observability/logger.ts';
import type { JwksTally } from '../observability/metrics.ts';
import { fetchJwksJson, JwksFetchError } from './jwks-fetch.ts';
import { AMBIGUOUS, KeyIndex } from './key-index.ts';

/** After this long a key set is fetched again on its next use (in the background), to drop withdrawn keys. */
export const KEYS_MAX_AGE_MS = 10 * 60 * 1000; // 10 min

/** A RemoteKeySet fetches one document: its fetches are one flight under this key. */
const KEY_SET = 'jwks';

/** No key set could be had to verify a token: the key server's failure, answered 503 with Retry-After. */
export class KeysUnavailableError extends Error {
  override readonly name = 'KeysUnavailableError';
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number, cause: unknown) {
    super(message, { cause });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface RemoteKeyOptions {
  readonly url: string;
  readonly algorithms: readonly JwsAlgorithm[];
  readonly cooldownMs: number;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

export interface RemoteKeyDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly tally: JwksTally;
}

/**
 * The keys of `auth.jwksUrl`. Fetches are single-flight and at most one per `cooldownMs`, whatever
 * arrives (unknown kids, readiness probes, old keys); only start-up, reload and --check-config
 * fetch at once. The last good key set stays in use while fetches fail, so an outage of the key
 * server costs nothing while its keys are still the ones tokens are signed with; without any key
 * set, tokens get 503 (KeysUnavailableError), never 401.
 */
export class RemoteKeySet {
  readonly url: string;
  readonly #options: RemoteKeyOptions;
  readonly #deps: RemoteKeyDeps;
  #index: KeyIndex | null = null;
  /** The last good set as parsed, to rebuild under other settings on reload. */
  #json: unknown = null;
  #loadedAtMs = Number.NaN;
  #attemptAtMs = Number.NEGATIVE_INFINITY;
  #failure: JwksFetchError | null = null;
  readonly #fetches = new SingleFlight<void>();

  constructor(options: RemoteKeyOptions, deps: RemoteKeyDeps) {
    this.url = options.url;
    this.#options = options;
    this.#deps = deps;
  }

  /** True once a key set is in use. */
  get loaded(): boolean {
    return this.#index !== null;
  }

  /** Why the last fetch failed; null after a success (or before any fetch). */
  get failure(): JwksFetchError | null {
    return this.#failure;
  }

  /** The key set in use, as fetched (null when none): equal fingerprints mean the same keys. */
  get fingerprint(): string | null {
    return this.#index?.fingerprint ?? null;
  }

  /** Seconds since the key set in use was fetched; NaN when there is none. */
  ageSeconds(): number {
    return (this.#deps.clock.now() - this.#loadedAtMs) / 1000;
  }

  /**
   * Takes over the last good key set of the RemoteKeySet this one replaces (a reload that changed
   * other auth settings), indexed under this one's algorithms, so a failed fetch keeps it.
   */
  async carryOver(previous: RemoteKeySet): Promise<void> {
    if (previous.#index === null) return;
    this.#index = await KeyIndex.build(previous.#json, this.#options.algorithms);
    this.#json = previous.#json;
    this.#loadedAtMs = previous.#loadedAtMs;
  }

  /** Resolves once no fetch is running (at once when none is). */
  async whenIdle(): Promise<void> {
    await this.#fetches.get(KEY_SET)?.promise;
  }

  /** Fetches now, ignoring the cooldown (start-up, reload, --check-config); never rejects: see `failure`. */
  refresh(): Promise<void> {
    return this.#fetches.run(KEY_SET, () => this.#fetch());
  }

  /** Starts a fetch in the background when none runs and the cooldown allows (readiness probes). */
  refreshIfDue(): void {
    if (!this.#fetches.has(KEY_SET) && this.#waitMs() <= 0) void this.refresh();
  }

  /** jose's getKey: the key at once when the set in use has it, else after a fetch the cooldown allows. */
  readonly getKey = (header: JWSHeaderParameters): CryptoKey | Promise<CryptoKey> => {
    const index = this.#index;
    if (index !== null) {
      const key = index.find(header.alg, header.kid);
      if (key === AMBIGUOUS) throw new errors.JWKSMultipleMatchingKeys();
      if (key !== undefined) {
        if (this.#deps.clock.now() - this.#loadedAtMs >= KEYS_MAX_AGE_MS) this.refreshIfDue();
        return key;
      }
    }
    // No key set, or none of its keys fits: a fetch may bring one (a rotated key), once per cooldown.
    if (!this.#fetches.has(KEY_SET) && this.#waitMs() > 0) {
      if (index === null) throw this.#unavailable();
      throw new errors.JWKSNoMatchingKey();
    }
    return this.refresh().then(() => this.#afterFetch(header));
  };

  #afterFetch(header: JWSHeaderParameters): CryptoKey {
    const key = this.#index?.find(header.alg, header.kid);
    if (key === AMBIGUOUS) throw new errors.JWKSMultipleMatchingKeys();
    if (key !== undefined) return key;
    // The fetch this token waited for failed: it cannot be told apart from a good token yet.
    if (this.#failure !== null) throw this.#unavailable();
    throw new errors.JWKSNoMatchingKey();
  }

  #unavailable(): KeysUnavailableError {
    const seconds = Math.max(1, Math.ceil(this.#waitMs() / 1000));
    const why = this.#failure?.message ?? 'not fetched yet';
    return new KeysUnavailableError(`no key set from ${this.url}: ${why}`, seconds, this.#failure);
  }

  /** Time until the cooldown allows the next fetch, in ms (0 or less: now). */
  #waitMs(): number {
    return this.#attemptAtMs + this.#options.cooldownMs - this.#deps.clock.now();
  }

  async #fetch(): Promise<void> {
    const { logger, tally, clock } = this.#deps;
    this.#attemptAtMs = clock.now();
    try {
      const json = await fetchJwksJson(this.url, { timeoutMs: this.#options.timeoutMs, maxBytes: this.#options.maxBytes });
      const index = await KeyIndex.build(json, this.#options.algorithms);
      const recovered = this.#failure !== null;
      this.#index = index;
      this.#json = json;
      this.#loadedAtMs = clock.now();
      this.#failure = null;
      tally.ok++;
      const fields = { event: 'jwks', url: this.url, keys: index.size };
      if (recovered) logger.info(`JWKS fetched from ${this.url} again (${index.size} usable keys)`, fields);
      else logger.debug(`JWKS fetched from ${this.url} (${index.size} usable keys)`, fields);
    } catch (err) {
      const failure = err instanceof JwksFetchError ? err : new JwksFetchError('unreachable', `failed (${(err as Error).message})`, err);
      this.#failure = failure;
      tally[failure.result]++;
      const next = `next try in ${Math.ceil(this.#options.cooldownMs / 1000)} s at the earliest`;
      if (this.#index === null) {
        logger.warn(`could not fetch the JWKS from ${this.url}: ${failure.message}; tokens get 503 until it answers (${next})`, {
          event: 'jwks',
          url: this.url,
          result: failure.result,
          cause: failure.message,
        });
      } else {
        const ageSeconds = Math.round(this.ageSeconds());
        logger.warn(`could not refresh the JWKS from ${this.url}: ${failure.message}; the key set fetched ${ageSeconds} s ago stays in use (stale; ${next})`, {
          event: 'jwks',
          url: this.url,
          result: failure.result,
          cause: failure.message,
          stale: true,
          ageSeconds,
        });
      }
    }
  }
}
