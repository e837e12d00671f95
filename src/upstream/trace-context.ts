import type { IncomingMessage } from 'node:http';
import type { ClaimValue } from '../auth/claims.ts';
import type { HgRequest } from '../protocol/response.ts';
import type { UpstreamCall } from './call.ts';

/** W3C Trace Context level 1, section 3.2: version 00, 32-hex trace id, 16-hex parent id, 2-hex flags. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
const MAX_TRACESTATE = 512;

/**
 * The Authorization header when it carries a Bearer token (the only credential forwardAuthorization
 * passes on); an API key (`ApiKey <key>`) never leaves the gateway. By its first letter: any other
 * scheme was refused before a request gets here.
 */
function bearerOnly(authorization: string | undefined): string | undefined {
  return authorization === undefined || (authorization.charCodeAt(0) | 0x20) === 0x62 ? authorization : undefined;
}

/**
 * What the upstream may be told about this request (the miss path only): our request id, the
 * caller's `traceparent`/`tracestate` when the traceparent is well formed (a malformed one is
 * dropped rather than forwarded, Trace Context section 3.3.2.2), and the Authorization header and
 * kept claims, which each service sends on only when configured to. With tracing on, the request's
 * trace goes along: each attempt then sends the traceparent of its own span instead (client.ts).
 */
export function callOf(req: IncomingMessage, requestId: string, claims?: readonly ClaimValue[]): UpstreamCall {
  const authorization = bearerOnly(req.headers.authorization);
  const traceparent = req.headers['traceparent'];
  // Set only while tracing is on (http/dispatch.ts).
  const trace = (req as HgRequest).trace;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent))
    return { requestId, traceparent: undefined, authorization, claims, request: req, trace };
  const tracestate = req.headers['tracestate'];
  return {
    requestId,
    traceparent,
    tracestate: typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE ? tracestate : undefined,
    authorization,
    claims,
    request: req,
    trace,
  };
}
