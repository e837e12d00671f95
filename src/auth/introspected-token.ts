import type { ClaimValue } from './claims.ts';
import { VerifiedToken } from './token-cache.ts';

/**
 * An opaque token's active introspection answer as its cache keeps it: a verified token's fields
 * and the client it was issued to (`client_id`) and its plan. A class of its own, so the entries
 * of the verified-token cache (JWTs) keep their shape and size.
 */
export class IntrospectedToken extends VerifiedToken {
  readonly scheme = 'introspection' as const;
  readonly consumer: string | undefined;
  readonly plan: string | undefined;

  constructor(
    subject: string | undefined,
    scopes: ReadonlySet<string>,
    expiresAtMs: number,
    claims: readonly ClaimValue[],
    slot: number,
    consumer: string | undefined,
    plan: string | undefined,
  ) {
    super(subject, scopes, expiresAtMs, claims, slot);
    this.consumer = consumer;
    this.plan = plan;
  }
}
