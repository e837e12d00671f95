import type { IncomingHttpHeaders } from 'node:http';
import type { ResponseHeaders } from '../lib/exchange.ts';

/**
 * Request headers never passed on: hop-by-hop ones (RFC 9110 section 7.6.1) and the framing, which
 * the gateway writes itself for the upstream connection (so no request can carry framing the two
 * hops read differently: request smuggling); Host (the upstream's own); the client's credentials
 * (Authorization goes on only where the service forwards it; cookies never); what the gateway sets
 * itself (the request id and trace context, and the service's fixed and claim headers); and
 * Expect, which the gateway answers itself (RFC 9110 section 10.1.1).
 */
const NEVER_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'proxy-authorization',
  'proxy-authenticate',
  'host',
  'content-length',
  'expect',
  'authorization',
  'cookie',
  'x-request-id',
  'traceparent',
  'tracestate',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
]);

/**
 * Response headers never passed back: hop-by-hop ones and the framing (Node frames the answer to
 * the client itself: the upstream's Content-Length goes on, its chunking does not), Set-Cookie
 * (cookies do not cross the gateway either way: the client never sends the upstream one), and the
 * request id, which is the gateway's.
 */
const NEVER_RETURNED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authenticate',
  'set-cookie',
  'set-cookie2',
  'x-request-id',
]);

/** The field names a Connection header lists: each is hop-by-hop for that message (RFC 9110 section 7.6.1). */
function connectionOptions(value: string | readonly string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return EMPTY;
  const names = new Set<string>();
  for (const line of typeof value === 'string' ? [value] : value) for (const name of line.split(',')) names.add(name.trim().toLowerCase());
  return names;
}
const EMPTY: ReadonlySet<string> = new Set();

/**
 * The client's end-to-end request headers as undici's flat list, without those never forwarded,
 * named in its Connection header or carrying an API key (`keyHeader`, auth.apiKeys.header, lower-case); Content-Length goes on when the body has one (framing is
 * otherwise undici's: chunked). `rawHeaders` keeps each field line as sent (Node joins repeated
 * fields in `headers`), so a list field with several lines reaches the upstream as several lines.
 */
export function forwardedRequestHeaders(
  rawHeaders: readonly string[],
  headers: IncomingHttpHeaders,
  withBody: boolean,
  keyHeader: string | null = null,
): string[] {
  const dropped = connectionOptions(headers.connection);
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    if (NEVER_FORWARDED.has(name) || dropped.has(name) || name === keyHeader) continue;
    out.push(name, rawHeaders[i + 1] as string);
  }
  const length = headers['content-length'];
  if (withBody && headers['transfer-encoding'] === undefined && length !== undefined) out.push('content-length', length);
  return out;
}

/** The upstream's end-to-end response headers as an object for writeHead, without those never returned. */
export function returnedResponseHeaders(headers: ResponseHeaders): Record<string, string | string[]> {
  const dropped = connectionOptions(headers['connection']);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NEVER_RETURNED.has(name) || dropped.has(name)) continue;
    out[name] = value;
  }
  return out;
}
