import type { JWTPayload } from 'jose';
import type { Config } from '../config/types.ts';

/** A claim value the gateway acts on: owner rules compare it, forwardClaims send it. Others are dropped. */
export type ClaimValue = string | number | undefined;

/**
 * The token claims the gateway reads beyond sub, scope and exp: every owner rule's claim and
 * every claim a service forwards. A verified token keeps only these (by index, in this order),
 * so the token cache holds no more of a payload than is used.
 */
export class ClaimTable {
  readonly names: readonly string[];
  readonly #index: ReadonlyMap<string, number>;

  constructor(names: Iterable<string>) {
    this.names = [...new Set(names)];
    this.#index = new Map(this.names.map((name, i) => [name, i]));
  }

  static of(config: Config): ClaimTable {
    const names: string[] = [];
    for (const resource of Object.values(config.resources)) {
      const claim = resource.owner === null ? null : (resource.owner.claim ?? config.auth.ownerClaim);
      if (claim !== null) names.push(claim);
    }
    for (const service of [config.upstream, ...Object.values(config.upstreams)]) names.push(...Object.values(service.forwardClaims));
    return new ClaimTable(names);
  }

  indexOf(name: string): number {
    const index = this.#index.get(name);
    if (index === undefined) throw new Error(`claim ${name} is not in the table`);
    return index;
  }

  /**
   * The kept claims of a verified payload; an empty table keeps nothing (one shared empty array).
   * A string longer than MAX_CLAIM_CHARS is not kept (it could name no parameter, and a token
   * cache entry must not grow with a claim the gateway barely reads).
   */
  keep(payload: JWTPayload): readonly ClaimValue[] {
    if (this.names.length === 0) return NONE;
    return this.names.map((name) => {
      const value = payload[name];
      if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
      return typeof value === 'string' && value.length <= MAX_CLAIM_CHARS ? value : undefined;
    });
  }
}

const NONE: readonly ClaimValue[] = Object.freeze([]);
/** Longest string claim kept: a string path parameter is at most 64 characters; a forwarded header value gets some room. */
const MAX_CLAIM_CHARS = 256;
