import type { JWTPayload } from 'jose';
import type { ClaimValue } from './claims.ts';
import { scopesOf } from './scopes.ts';

/**
 * What a verified token says about its bearer. Only what the gateway reads is kept, never the
 * payload: with 100,000 tokens cached this is most of the token cache's memory.
 */
export interface Principal {
  readonly subject: string | undefined;
  /** The scopes the gateway checks (`keptScopes`) that the token has; no other scope is kept. */
  readonly scopes: ReadonlySet<string>;
  /** The token's `exp`, in ms: the cache entry is dropped at this instant. */
  readonly expiresAtMs: number;
  /** The claims the gateway reads (owner rules, forwardClaims), in ClaimTable order. */
  readonly claims: readonly ClaimValue[];
  /** How the caller proved who it is; undefined: a JWT (every principal before other schemes). */
  readonly scheme?: 'jwt' | 'api-key' | 'introspection';
  /** The client or consumer the credentials were issued to (an introspected token's `client_id`), for the access log. */
  readonly consumer?: string;
  /** The plan whose limits and quotas apply to the caller, when its credentials name one. */
  readonly plan?: string;
}

/**
 * The caller of a public read that came without credentials (or with a valid token lacking the
 * read scope): no subject, no scopes, no claims. One frozen value, so code after authentication
 * treats it as any principal and nothing of it is allocated per request.
 */
export const ANONYMOUS: Principal = Object.freeze({
  subject: undefined,
  scopes: new Set<string>(),
  expiresAtMs: Number.POSITIVE_INFINITY,
  claims: Object.freeze([]),
});

/** Distinct kept-scope sets remembered for sharing; past this the table starts over (it is only a saving). */
const MAX_SHARED_SCOPE_SETS = 1024;

/**
 * The scopes a principal keeps: of those the gateway checks, the ones its token has, as one set
 * shared by every token with the same ones (so the token cache charges no set per entry).
 */
export class KeptScopes {
  readonly #checked: readonly string[];
  readonly #sets = new Map<string, ReadonlySet<string>>();

  /** `checked`: every scope the gateway may check. */
  constructor(checked: readonly string[]) {
    this.#checked = [...new Set(checked)];
  }

  of(payload: JWTPayload): ReadonlySet<string> {
    const all = scopesOf(payload);
    const kept = this.#checked.filter((s) => all.has(s));
    const key = kept.join(' ');
    let scopes = this.#sets.get(key);
    if (scopes === undefined) {
      if (this.#sets.size >= MAX_SHARED_SCOPE_SETS) this.#sets.clear();
      scopes = new Set(kept);
      this.#sets.set(key, scopes);
    }
    return scopes;
  }
}
