import { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The gateway's response object (node:http `ServerResponse` option): it carries what the access
 * log and the metrics need about the exchange, as plain fields set once per request, so the
 * hot path needs no closure, map or listener to remember them.
 */
export class HgResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  /** performance.now() when the request reached the gateway. */
  startedAt: number = performance.now();
  requestId = '';
  /** Cache outcome for the access log: hit, miss, collapsed, stale, bypass; '' when not cacheable. */
  cacheOutcome = '';
  /** Time spent waiting for the upstream, in ms; -1 when it was not asked. */
  upstreamMs = -1;
  /** Body bytes written (set by the writers), for the access log. */
  bytes = 0;
  /** Index of the route's statistics (see RequestStats); -1 until routed. */
  routeIndex = -1;
  /** True once metrics and the access log have seen this exchange. */
  recorded = false;
}

/** The gateway's request object: the token's subject, once authenticated, for the access log. */
export class HgRequest extends IncomingMessage {
  subject: string | undefined = undefined;
  /** The rest of a refused body is being read and dropped (body.ts discardBody): the connection may stay. */
  discardingBody = false;
}
