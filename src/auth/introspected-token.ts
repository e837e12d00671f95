import type { ClaimValue } from './claims.ts';
import { PlannedToken } from './token-cache.ts';

/**
 * An opaque token's active introspection answer as its cache keeps it: a planned token's fields
 * and the client it was issued to (`client_id`). A class of its own, so the entries of the
 * verified-token cache (JWTs) keep their shape and size.
 */
export class IntrospectedToken extends PlannedToken {
  readonly scheme = 'introspection' as const;
  readonly consumer: string | undefined;

  constructor(
    subject: string | undefined,
    scopes: ReadonlySet<string>,
    expiresAtMs: number,
    claims: readonly ClaimValue[],
    slot: number,
    consumer: string | undefined,
    plan: string | undefined,
  ) {
    super(subject, scopes, expiresAtMs, claims, slot, plan);
    this.consumer = consumer;
  }
}
