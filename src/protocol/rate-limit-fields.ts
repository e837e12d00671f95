import type { IncomingMessage, ServerResponse } from 'node:http';

/** On a request whose answer carries the RateLimit fields of a passing decision: that answer. */
const ANSWER = Symbol('hypergate.rateLimitAnswer');

type Marked = { [ANSWER]?: ServerResponse };

/**
 * Marks `req` as one whose answer `res` is to carry the RateLimit fields of the limits it passed
 * (plans and limits per route are configured). Only such a gateway marks its requests: one
 * without them sends no RateLimit field on a passing answer, and its requests carry no mark.
 */
export function carryRateLimitFields(req: IncomingMessage, res: ServerResponse): void {
  (req as Marked)[ANSWER] = res;
}

/**
 * Adds one decision's items to the RateLimit-Policy and RateLimit fields of the request's answer
 * (draft-ietf-httpapi-ratelimit-headers-11 allows several policies, one list item each); nothing
 * when the request is not marked or its head is sent. Node's writeHead merges them with the
 * answer's own header list, and a 429's own fields take their place.
 */
export function addRateLimitFields(req: IncomingMessage | undefined, policy: string, limit: string): void {
  const res = req === undefined ? undefined : (req as Marked)[ANSWER];
  if (res === undefined || res.headersSent) return;
  const policies = res.getHeader('RateLimit-Policy');
  const limits = res.getHeader('RateLimit');
  res.setHeader('RateLimit-Policy', typeof policies === 'string' ? `${policies}, ${policy}` : policy);
  res.setHeader('RateLimit', typeof limits === 'string' ? `${limits}, ${limit}` : limit);
}
