import type { IncomingMessage } from 'node:http';
import type { ClaimValue } from '../auth/claims.ts';
import type { RequestTrace } from '../observability/tracing.ts';

/**
 * Who asked, as far as an upstream may be told: our request id and the caller's trace context
 * (W3C Trace Context), and, for the services configured to receive them, the client's
 * Authorization header and the claims named in forwardClaims.
 */
export interface UpstreamCall {
  readonly requestId: string;
  /** A valid `traceparent` to forward, or undefined. */
  readonly traceparent: string | undefined;
  readonly tracestate?: string | undefined;
  readonly authorization?: string | undefined;
  /** The principal's kept claims (ClaimTable order). */
  readonly claims?: readonly ClaimValue[] | undefined;
  /** The client's request, for the headers a service is configured to receive (forwardHeaders, forwarded). */
  readonly request?: IncomingMessage | undefined;
  /** The request's trace (tracing.enabled): each attempt is a CLIENT span under it, and the traceparent sent names that span. */
  readonly trace?: RequestTrace | undefined;
}
