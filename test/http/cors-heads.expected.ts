/** Fields that recur in the heads below. */
const GRANTED = [
  'Access-Control-Allow-Origin: https://app.example.com',
  'Access-Control-Expose-Headers: ETag, Cache-Status, Age, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location',
];
const ITEM = ['Content-Type: application/json', 'Cache-Control: max-age=60', 'ETag: "T6klxb51Q6u7dlf6CN2PGzKWiJK"', 'Age: 0', 'Content-Length: 121'];
const PROBLEM = ['Content-Type: application/problem+json', 'Cache-Control: no-store'];
const CLOSING = ['X-Request-Id: *', 'Date: *', 'Connection: close'];

/** One head, its lines joined as on the wire. */
function head(...lines: (string | string[])[]): string {
  return lines.flat().join('\r\n');
}

/**
 * The raw heads the gateway wrote with CORS on (cors-heads.test.ts), recorded while CORS set its
 * fields one by one with node:http's setHeader; Date and X-Request-Id are placeholders.
 */
export const EXPECTED_HEADS: Record<string, string> = {
  miss: head('HTTP/1.1 200 OK', 'Vary: Accept, Origin', GRANTED, ITEM, 'Cache-Status: hypergate; fwd=miss; stored', CLOSING),
  hit: head('HTTP/1.1 200 OK', 'Vary: Accept, Origin', GRANTED, ITEM, 'Cache-Status: hypergate; hit; ttl=60', CLOSING),
  notModified: head(
    'HTTP/1.1 304 Not Modified',
    'Vary: Accept, Origin',
    GRANTED,
    'Cache-Control: max-age=60',
    'ETag: "T6klxb51Q6u7dlf6CN2PGzKWiJK"',
    'Age: 0',
    'Cache-Status: hypergate; hit; ttl=60',
    CLOSING,
  ),
  head: head('HTTP/1.1 200 OK', 'Vary: Accept, Origin', GRANTED, ITEM, 'Cache-Status: hypergate; hit; ttl=60', CLOSING),
  otherOrigin: head('HTTP/1.1 200 OK', 'Vary: Accept, Origin', ITEM, 'Cache-Status: hypergate; hit; ttl=60', CLOSING),
  noOrigin: head('HTTP/1.1 200 OK', 'Vary: Accept, Origin', ITEM, 'Cache-Status: hypergate; hit; ttl=60', CLOSING),
  collection: head(
    'HTTP/1.1 200 OK',
    'Vary: Accept, Origin',
    GRANTED,
    'Content-Type: application/json',
    'Cache-Control: max-age=60',
    'ETag: "AiYNo6GYKj1stP-vIXzCCdq8nJO"',
    'Age: 0',
    'Content-Length: 2627',
    'Cache-Status: hypergate; fwd=miss; stored',
    CLOSING,
  ),
  unauthorized: head(
    'HTTP/1.1 401 Unauthorized',
    'Vary: Origin',
    GRANTED,
    PROBLEM,
    'Content-Length: 188',
    'WWW-Authenticate: Bearer realm="hypergate"',
    CLOSING,
  ),
  notFound: head('HTTP/1.1 404 Not Found', 'Vary: Origin', GRANTED, PROBLEM, 'Content-Length: 151', CLOSING),
  methodNotAllowed: head(
    'HTTP/1.1 405 Method Not Allowed',
    'Vary: Origin',
    GRANTED,
    PROBLEM,
    'Content-Length: 190',
    'Allow: GET, HEAD, PUT, PATCH, DELETE',
    CLOSING,
  ),
  preflight: head(
    'HTTP/1.1 204 No Content',
    'Vary: Origin',
    'Access-Control-Allow-Origin: https://app.example.com',
    'Access-Control-Allow-Methods: GET, HEAD, PUT, PATCH, DELETE',
    'Access-Control-Allow-Headers: Authorization, Accept, If-None-Match, Content-Type, If-Match, Idempotency-Key',
    'Access-Control-Max-Age: 600',
    'Cache-Control: no-store',
    'Content-Length: 0',
    'Date: *',
    'Connection: close',
  ),
  preflightUnknownPath: head(
    'HTTP/1.1 404 Not Found',
    'Vary: Origin',
    'Access-Control-Allow-Origin: https://app.example.com',
    PROBLEM,
    'Content-Length: 151',
    CLOSING,
  ),
  preflightOtherOrigin: head(
    'HTTP/1.1 204 No Content',
    'Vary: Origin',
    'Allow: GET, HEAD, PUT, PATCH, DELETE',
    'Cache-Control: no-store',
    'Content-Length: 0',
    'X-Request-Id: *',
    'Accept-Patch: application/merge-patch+json',
    'Date: *',
    'Connection: close',
  ),
  options: head(
    'HTTP/1.1 204 No Content',
    'Vary: Origin',
    GRANTED,
    'Allow: GET, HEAD, PUT, PATCH, DELETE',
    'Cache-Control: no-store',
    'Content-Length: 0',
    'X-Request-Id: *',
    'Accept-Patch: application/merge-patch+json',
    'Date: *',
    'Connection: close',
  ),
  write: head(
    'HTTP/1.1 200 OK',
    'Vary: Accept, Origin',
    GRANTED,
    'Content-Type: application/json',
    'ETag: "T6klxb51Q6u7dlf6CN2PGzKWiJK"',
    'Content-Location: /api/customers/42',
    'Cache-Control: no-store',
    'Content-Length: 121',
    CLOSING,
  ),
  relayed: head(
    'HTTP/1.1 200 OK',
    'vary: Origin, Accept-Encoding',
    GRANTED,
    'content-type: application/json',
    'content-length: 281',
    'x-end-to-end: kept',
    'date: *',
    'x-request-id: *',
    'Connection: close',
  ),
};
