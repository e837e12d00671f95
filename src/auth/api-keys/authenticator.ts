import type { IncomingMessage } from 'node:http';
import type { AuthConfig } from '../../config/types.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ApiKeyTally } from '../../observability/metrics.ts';
import { countAuthorizationHeaders } from '../bearer.ts';
import { invalidRequest } from '../challenge.ts';
import type { ClaimTable } from '../claims.ts';
import { KeptScopes, type Principal } from '../principal.ts';
import { apiKeyChallenge, apiKeysUnavailable, invalidApiKey, withApiKeyChallenge } from './challenge.ts';
import { consumerPrincipal, type Consumer } from './consumer.ts';
import { apiKeyHash, isWellFormedApiKey } from './key-format.ts';
import { ApiKeyStoreUnavailable, type ApiKeyLookup, type ApiKeyRecord } from './store.ts';

export type ApiKeysConfig = AuthConfig['apiKeys'];

/** "ApiKey" and at least one space (the scheme is case-insensitive, RFC 9110 section 11.1). */
const SCHEME = /^apikey +/i;

/**
 * API keys as a way to authenticate (auth.apiKeys): reads the key from a request, refuses a
 * malformed one before any lookup, and finds its consumer in the key file or the store (Redis), as
 * the principal a token with the same scopes and claims would be. Made per pipeline (the file is
 * read again on reload); the store and what it caches outlive it.
 */
export class ApiKeyAuthenticator {
  /** The header that carries the key, lower-case; null: Authorization with the ApiKey scheme. */
  readonly header: string | null;
  /** The ApiKey challenge every 401 of a route that takes keys names besides Bearer. */
  readonly challenge: string;
  readonly #prefix: string;
  readonly #file: ReadonlyMap<string, Principal>;
  readonly #store: ApiKeyLookup | null;
  readonly #kept: KeptScopes;
  readonly #claims: ClaimTable;
  readonly #clock: Clock;
  readonly #tally: ApiKeyTally;
  /** The principal of each record the store answered (the store answers the same record until it looks again). */
  readonly #principals = new WeakMap<ApiKeyRecord, Principal>();

  /**
   * `file`: the key file's consumers by key hash; `store`: the store's keys (null without Redis or
   * with auth.apiKeys.redis false); `keptScopes` and `claims`: what a principal keeps, as for tokens.
   */
  constructor(
    config: ApiKeysConfig,
    parts: {
      readonly file: ReadonlyMap<string, Consumer>;
      readonly store: ApiKeyLookup | null;
      readonly keptScopes: readonly string[];
      readonly claims: ClaimTable;
      readonly clock: Clock;
      readonly tally: ApiKeyTally;
    },
  ) {
    this.header = config.header === null ? null : config.header.toLowerCase();
    this.challenge = apiKeyChallenge(config.header);
    this.#prefix = config.prefix;
    this.#store = parts.store;
    this.#kept = new KeptScopes(parts.keptScopes);
    this.#claims = parts.claims;
    this.#clock = parts.clock;
    this.#tally = parts.tally;
    const principals = new Map<Consumer, Principal>();
    const file = new Map<string, Principal>();
    for (const [hash, consumer] of parts.file) {
      let principal = principals.get(consumer);
      if (principal === undefined) {
        principal = consumerPrincipal(consumer, this.#kept, this.#claims);
        principals.set(consumer, principal);
      }
      file.set(hash, principal);
    }
    this.#file = file;
  }

  /**
   * Does the request carry a key: `Authorization: ApiKey ...`, or the operator's header without an
   * Authorization header (a request with both is a token's)? Decided without an exception: a Bearer
   * request pays one character comparison (or one header lookup) for it.
   */
  carries(req: IncomingMessage): boolean {
    const authorization = req.headers.authorization;
    if (this.header !== null) return authorization === undefined && req.headers[this.header] !== undefined;
    // 0x61: "a" (ApiKey, any case), before the regex.
    return authorization !== undefined && (authorization.charCodeAt(0) | 0x20) === 0x61 && SCHEME.test(authorization);
  }

  /** The key the request carries, or null when it carries none (then it goes the Bearer way). A second Authorization header is a 400. */
  read(req: IncomingMessage): string | null {
    if (!this.carries(req)) return null;
    if (this.header !== null) {
      const value = req.headers[this.header];
      return typeof value === 'string' ? value.trim() : null;
    }
    if (countAuthorizationHeaders(req.rawHeaders) !== 1) throw invalidRequest('more than one Authorization header');
    const authorization = req.headers.authorization as string;
    return authorization.slice(authorization.indexOf(' ')).trim();
  }

  /**
   * The principal of a key: at once from the key file or a recent store answer, else a promise.
   * A malformed key (prefix, length, alphabet, checksum) is refused before any lookup; an unknown
   * or expired one is 401; a store that cannot answer for a key not known here is 503.
   */
  authenticate(key: string): Principal | Promise<Principal> {
    if (!isWellFormedApiKey(key, this.#prefix)) {
      this.#tally.malformed++;
      throw invalidApiKey('the key is malformed', this.challenge);
    }
    const hash = apiKeyHash(key);
    const listed = this.#file.get(hash);
    if (listed !== undefined) {
      this.#tally.ok++;
      return listed;
    }
    if (this.#store === null) return this.#unknown();
    let found: ApiKeyRecord | null | Promise<ApiKeyRecord | null>;
    try {
      found = this.#store.find(hash);
    } catch (err) {
      throw this.#failed(err);
    }
    if (found instanceof Promise) {
      return found.then(
        (record) => this.#principalOf(record),
        (err: unknown) => {
          throw this.#failed(err);
        },
      );
    }
    return this.#principalOf(found);
  }

  /** A 401 of the Bearer path on a route that takes keys too: both schemes named. */
  challenged(err: unknown): unknown {
    return withApiKeyChallenge(err, this.challenge);
  }

  #principalOf(record: ApiKeyRecord | null): Principal {
    if (record === null || (record.expiresAtMs !== null && record.expiresAtMs <= this.#clock.now())) return this.#unknown();
    let principal = this.#principals.get(record);
    if (principal === undefined) {
      principal = consumerPrincipal(record, this.#kept, this.#claims, record.expiresAtMs ?? Number.POSITIVE_INFINITY);
      this.#principals.set(record, principal);
    }
    this.#tally.ok++;
    return principal;
  }

  #unknown(): never {
    this.#tally.unknown++;
    throw invalidApiKey('the key is unknown, revoked or expired', this.challenge);
  }

  #failed(err: unknown): unknown {
    if (!(err instanceof ApiKeyStoreUnavailable)) return err;
    this.#tally.unavailable++;
    return apiKeysUnavailable(err);
  }
}
