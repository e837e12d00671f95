import type { JWTPayload } from 'jose';
import type { Config } from '../config/types.ts';

/**
 * A string claim longer than any service may be sent (upstream.maxClaimBytes): kept as this mark
 * rather than whole, so a request that would forward it is refused, never sent without it.
 */
export const OVERSIZED_CLAIM: unique symbol = Symbol('oversized claim');

/** A claim value the gateway acts on: owner rules compare it, forwardClaims send it. Others are dropped. */
export type ClaimValue = string | number | typeof OVERSIZED_CLAIM | undefined;

/**
 * The token claims the gateway reads beyond sub, scope and exp: every owner rule's claim and
 * every claim a service forwards. A verified token keeps only these (by index, in this order),
 * so the token cache holds no more of a payload than is used.
 */
export class ClaimTable {
  readonly names: readonly string[];
  /** Longest string claim kept whole, in characters; a longer one is kept as OVERSIZED_CLAIM. */
  readonly maxChars: number;
  readonly #index: ReadonlyMap<string, number>;

  constructor(names: Iterable<string>, maxChars = MIN_KEPT_CHARS) {
    this.names = [...new Set(names)];
    this.maxChars = maxChars;
    this.#index = new Map(this.names.map((name, i) => [name, i]));
  }

  static of(config: Config): ClaimTable {
    const names: string[] = [];
    for (const resource of Object.values(config.resources)) {
      const claim = resource.owner === null ? null : (resource.owner.claim ?? config.auth.ownerClaim);
      if (claim !== null) names.push(claim);
    }
    let maxChars = MIN_KEPT_CHARS;
    for (const service of [config.upstream, ...Object.values(config.upstreams)]) {
      names.push(...Object.values(service.forwardClaims));
      // A value is sent in at least as many bytes as it has characters: a longer one fits no service.
      maxChars = Math.max(maxChars, service.maxClaimBytes);
    }
    return new ClaimTable(names, maxChars);
  }

  indexOf(name: string): number {
    const index = this.#index.get(name);
    if (index === undefined) throw new Error(`claim ${name} is not in the table`);
    return index;
  }

  /**
   * The kept claims of a verified payload; an empty table keeps nothing (one shared empty array).
   * A string longer than maxChars is kept as OVERSIZED_CLAIM (no service may be sent it, and a
   * token cache entry must not grow with it; the cache charges the strings it keeps).
   */
  keep(payload: JWTPayload): readonly ClaimValue[] {
    if (this.names.length === 0) return NONE;
    return this.names.map((name) => {
      const value = payload[name];
      if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
      if (typeof value !== 'string') return undefined;
      return value.length <= this.maxChars ? value : OVERSIZED_CLAIM;
    });
  }
}

const NONE: readonly ClaimValue[] = Object.freeze([]);
/** Strings kept whatever upstream.maxClaimBytes says: a string path parameter (an owner rule's) is at most 64 characters. */
const MIN_KEPT_CHARS = 256;
