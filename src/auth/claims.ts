import type { JWTPayload } from 'jose';
import type { Config } from '../config/types.ts';
import { varyClaims } from '../config/vary.ts';

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
  /**
   * Per claim (by index), the longest string kept whole, in characters, and whether a service is
   * sent it: a longer forwarded one is kept as OVERSIZED_CLAIM, a longer one only owner rules
   * read is not kept at all (it could name no parameter).
   */
  readonly maxChars: readonly number[];
  readonly #forwarded: readonly boolean[];
  readonly #index: ReadonlyMap<string, number>;

  /** `forwarded`: claim → the largest maxClaimBytes of the services it is forwarded to. */
  constructor(names: Iterable<string>, forwarded: ReadonlyMap<string, number> = new Map()) {
    this.names = [...new Set(names)];
    // A value is sent in at least as many bytes as it has characters: a longer one fits no service.
    this.maxChars = this.names.map((name) => Math.max(OWNER_CLAIM_CHARS, forwarded.get(name) ?? 0));
    this.#forwarded = this.names.map((name) => forwarded.has(name));
    this.#index = new Map(this.names.map((name, i) => [name, i]));
  }

  static of(config: Config): ClaimTable {
    const names: string[] = [];
    for (const resource of Object.values(config.resources)) {
      const claim = resource.owner === null ? null : (resource.owner.claim ?? config.auth.ownerClaim);
      if (claim !== null) names.push(claim);
    }
    const forwarded = new Map<string, number>();
    for (const service of [config.upstream, ...Object.values(config.upstreams)]) {
      for (const claim of Object.values(service.forwardClaims)) {
        names.push(claim);
        forwarded.set(claim, Math.max(forwarded.get(claim) ?? 0, service.maxClaimBytes));
      }
    }
    // A claim a cache key reads is kept whole up to VARY_CLAIM_CHARS, longer as OVERSIZED_CLAIM: a
    // longer one dropped would make every such token one identity.
    for (const claim of varyClaims(config)) {
      names.push(claim);
      forwarded.set(claim, Math.max(forwarded.get(claim) ?? 0, VARY_CLAIM_CHARS));
    }
    return new ClaimTable(names, forwarded);
  }

  indexOf(name: string): number {
    const index = this.#index.get(name);
    if (index === undefined) throw new Error(`claim ${name} is not in the table`);
    return index;
  }

  /**
   * The kept claims of a verified payload; an empty table keeps nothing (one shared empty array).
   * A string longer than its maxChars is not kept whole (a token cache entry must not grow with
   * it; the cache charges the strings it keeps): forwarded, it is kept as OVERSIZED_CLAIM.
   */
  keep(payload: JWTPayload): readonly ClaimValue[] {
    if (this.names.length === 0) return NONE;
    return this.names.map((name, i) => {
      const value = payload[name];
      if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
      if (typeof value !== 'string') return undefined;
      if (value.length <= (this.maxChars[i] as number)) return value;
      return this.#forwarded[i] === true ? OVERSIZED_CLAIM : undefined;
    });
  }
}

const NONE: readonly ClaimValue[] = Object.freeze([]);
/** Longest claim kept whole for a cache key (resources.<name>.vary); a longer one refuses the request. */
const VARY_CLAIM_CHARS = 1024;
/** Longest string kept for owner rules: a string path parameter is at most 64 characters. */
const OWNER_CLAIM_CHARS = 256;
