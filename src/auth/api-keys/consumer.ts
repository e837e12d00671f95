import type { ClaimTable } from '../claims.ts';
import type { KeptScopes, Principal } from '../principal.ts';

/** Who an API key belongs to: a name, its scopes, the claims owner rules and forwardClaims read, and its plan. */
export interface Consumer {
  readonly consumer: string;
  readonly scopes: readonly string[];
  readonly claims: Readonly<Record<string, string | number>>;
  readonly plan: string | null;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/;
const MAX_SCOPES = 100;
const MAX_CLAIMS = 50;

/**
 * What is wrong with a consumer as the key file or the admin API gives it (`name` apart from the
 * rest in the file), or null. Claims are strings or finite numbers, as a token's claims the
 * gateway reads are; the plan is a name or null.
 */
export function consumerProblem(name: unknown, scopes: unknown, claims: unknown, plan: unknown): string | null {
  if (typeof name !== 'string' || !NAME.test(name))
    return 'the consumer name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';
  if (scopes !== undefined && (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((s) => typeof s === 'string' && SCOPE.test(s)))) {
    return `"scopes" must be a list of at most ${MAX_SCOPES} scopes (no spaces, quotes or backslashes)`;
  }
  if (claims !== undefined) {
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return '"claims" must be an object';
    const entries = Object.entries(claims);
    if (entries.length > MAX_CLAIMS) return `"claims" may name at most ${MAX_CLAIMS} claims`;
    for (const [claim, value] of entries) {
      if (!(typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) return `claim "${claim}" must be a string or a number`;
    }
  }
  if (plan !== undefined && plan !== null && (typeof plan !== 'string' || !NAME.test(plan))) return '"plan" must be a plan name or null';
  return null;
}

/** A consumer from values consumerProblem() found nothing wrong with. */
export function consumerOf(name: string, scopes: unknown, claims: unknown, plan: unknown): Consumer {
  return {
    consumer: name,
    scopes: Array.isArray(scopes) ? (scopes as string[]) : [],
    claims: (claims ?? {}) as Record<string, string | number>,
    plan: typeof plan === 'string' ? plan : null,
  };
}

/**
 * The subject of a consumer's keys: its name under `api-key:`, so no token's `sub` shares its rate
 * bucket or idempotency records, and the access log's `sub` names both the scheme and the consumer.
 */
export function apiKeySubject(consumer: string): string {
  return `api-key:${consumer}`;
}

/**
 * The principal of a consumer's keys: what a verified token would give with the same scopes and
 * claims, so ownership, forwardClaims, identity-aware caching and rate limits treat both alike.
 * `expiresAtMs`: when the key stops working (a rotated key's overlap), else never.
 */
export function consumerPrincipal(consumer: Consumer, kept: KeptScopes, claims: ClaimTable, expiresAtMs = Number.POSITIVE_INFINITY): Principal {
  const principal: Principal = {
    subject: apiKeySubject(consumer.consumer),
    scopes: kept.of({ scope: consumer.scopes.join(' ') }),
    expiresAtMs,
    claims: claims.keep(consumer.claims),
    scheme: 'api-key',
    consumer: consumer.consumer,
    ...(consumer.plan === null ? {} : { plan: consumer.plan }),
  };
  return Object.freeze(principal);
}
