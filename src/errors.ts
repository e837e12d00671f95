/**
 * The error registry: every error hypergate answers with has one code here, with its status,
 * RFC 9457 problem type and title. http/problem.ts is the only place that turns them into bytes.
 */
export type HgErrorCode =
  | 'HG_ERR_ROUTE_NOT_FOUND'
  | 'HG_ERR_CUSTOMER_NOT_FOUND'
  | 'HG_ERR_ORDER_NOT_FOUND'
  | 'HG_ERR_INVALID_QUERY'
  | 'HG_ERR_NOT_OWNER'
  | 'HG_ERR_METHOD_NOT_ALLOWED'
  | 'HG_ERR_NOT_ACCEPTABLE'
  | 'HG_ERR_BAD_REQUEST'
  | 'HG_ERR_PAYLOAD_TOO_LARGE'
  | 'HG_ERR_URI_TOO_LONG'
  | 'HG_ERR_HEADERS_TOO_LARGE'
  | 'HG_ERR_REQUEST_TIMEOUT'
  | 'HG_ERR_AUTH_MISSING'
  | 'HG_ERR_AUTH_INVALID_REQUEST'
  | 'HG_ERR_AUTH_INVALID_TOKEN'
  | 'HG_ERR_AUTH_INSUFFICIENT_SCOPE'
  | 'HG_ERR_AUTH_KEYS_UNAVAILABLE'
  | 'HG_ERR_RATE_LIMITED'
  | 'HG_ERR_PIPELINE_TOO_DEEP'
  | 'HG_ERR_UPSTREAM_BAD_GATEWAY'
  | 'HG_ERR_UPSTREAM_TIMEOUT'
  | 'HG_ERR_UPSTREAM_UNAVAILABLE'
  | 'HG_ERR_NOT_READY'
  | 'HG_ERR_INTERNAL';

export interface ErrorDefinition {
  readonly status: number;
  /** Stable slug of the problem type URI. */
  readonly slug: string;
  readonly title: string;
  /** Default detail when the thrower gives none. */
  readonly detail: string;
}

export const PROBLEM_TYPE_BASE = 'urn:hypergate:problem:';

export const ERRORS: Readonly<Record<HgErrorCode, ErrorDefinition>> = Object.freeze({
  HG_ERR_ROUTE_NOT_FOUND: { status: 404, slug: 'not-found', title: 'Not Found', detail: 'No resource exists at this path.' },
  HG_ERR_CUSTOMER_NOT_FOUND: { status: 404, slug: 'customer-not-found', title: 'Customer Not Found', detail: 'No customer exists with this id.' },
  HG_ERR_ORDER_NOT_FOUND: { status: 404, slug: 'order-not-found', title: 'Order Not Found', detail: 'No order exists with this id for this customer.' },
  HG_ERR_INVALID_QUERY: { status: 400, slug: 'invalid-query-parameter', title: 'Invalid Query Parameter', detail: 'A query parameter is malformed or out of range.' },
  HG_ERR_NOT_OWNER: { status: 403, slug: 'not-owner', title: 'Forbidden', detail: 'This token may read only its own customer.' },
  HG_ERR_METHOD_NOT_ALLOWED: { status: 405, slug: 'method-not-allowed', title: 'Method Not Allowed', detail: 'This resource does not support the request method.' },
  HG_ERR_NOT_ACCEPTABLE: { status: 406, slug: 'not-acceptable', title: 'Not Acceptable', detail: 'None of the media types in Accept is available for this resource.' },
  HG_ERR_BAD_REQUEST: { status: 400, slug: 'bad-request', title: 'Bad Request', detail: 'The request could not be parsed.' },
  HG_ERR_PAYLOAD_TOO_LARGE: { status: 413, slug: 'payload-too-large', title: 'Content Too Large', detail: 'This resource accepts no request body.' },
  HG_ERR_URI_TOO_LONG: { status: 414, slug: 'uri-too-long', title: 'URI Too Long', detail: 'The request target is longer than this gateway accepts.' },
  HG_ERR_HEADERS_TOO_LARGE: { status: 431, slug: 'headers-too-large', title: 'Request Header Fields Too Large', detail: 'The request headers are larger than this gateway accepts.' },
  HG_ERR_REQUEST_TIMEOUT: { status: 408, slug: 'request-timeout', title: 'Request Timeout', detail: 'The request was not received in time.' },
  HG_ERR_AUTH_MISSING: { status: 401, slug: 'unauthorized', title: 'Unauthorized', detail: 'This resource requires a bearer token in the Authorization header.' },
  HG_ERR_AUTH_INVALID_REQUEST: { status: 400, slug: 'invalid-request', title: 'Invalid Authorization Request', detail: 'The Authorization header is malformed.' },
  HG_ERR_AUTH_INVALID_TOKEN: { status: 401, slug: 'invalid-token', title: 'Invalid Token', detail: 'The bearer token is invalid, expired or not yet valid.' },
  HG_ERR_AUTH_INSUFFICIENT_SCOPE: { status: 403, slug: 'insufficient-scope', title: 'Insufficient Scope', detail: 'The bearer token lacks the scope this resource requires.' },
  HG_ERR_AUTH_KEYS_UNAVAILABLE: { status: 503, slug: 'keys-unavailable', title: 'Service Unavailable', detail: 'The keys needed to verify the token could not be fetched; try again shortly.' },
  HG_ERR_RATE_LIMITED: { status: 429, slug: 'rate-limited', title: 'Too Many Requests', detail: 'Too many requests; try again after the time in Retry-After.' },
  HG_ERR_PIPELINE_TOO_DEEP: { status: 503, slug: 'too-many-pipelined-requests', title: 'Service Unavailable', detail: 'Too many requests of this connection are waiting for their answers; this one was not processed and the connection is closed: send it again on a new connection.' },
  HG_ERR_UPSTREAM_BAD_GATEWAY: { status: 502, slug: 'bad-gateway', title: 'Bad Gateway', detail: 'The customer service answered with an error or an invalid response.' },
  HG_ERR_UPSTREAM_TIMEOUT: { status: 504, slug: 'gateway-timeout', title: 'Gateway Timeout', detail: 'The customer service did not answer in time.' },
  HG_ERR_UPSTREAM_UNAVAILABLE: { status: 503, slug: 'upstream-unavailable', title: 'Service Unavailable', detail: 'The customer service is failing, so requests to it are paused; try again after Retry-After seconds.' },
  HG_ERR_NOT_READY: { status: 503, slug: 'not-ready', title: 'Service Unavailable', detail: 'This instance is not ready to serve traffic.' },
  HG_ERR_INTERNAL: { status: 500, slug: 'internal-error', title: 'Internal Server Error', detail: 'An unexpected error occurred.' },
});

export const ERROR_CODES = Object.keys(ERRORS) as HgErrorCode[];

/** A failure we know how to answer. `detail` must be safe to show a client; `cause` never is. */
export class HgError extends Error {
  readonly code: HgErrorCode;
  readonly status: number;
  readonly detail: string;
  /** Extra response headers (WWW-Authenticate, Allow, ...). */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: HgErrorCode, options: { detail?: string; headers?: Record<string, string>; cause?: unknown } = {}) {
    const def = ERRORS[code];
    super(`${code}: ${options.detail ?? def.detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HgError';
    this.code = code;
    this.status = def.status;
    this.detail = options.detail ?? def.detail;
    this.headers = options.headers;
  }
}

export function isHgError(err: unknown): err is HgError {
  return err instanceof HgError;
}
