/**
 * The error registry: every error hypergate answers with has one code here, with its status,
 * RFC 9457 problem type and title. protocol/problem.ts is the only place that turns them into bytes.
 */
export type HgErrorCode =
  | 'HG_ERR_ROUTE_NOT_FOUND'
  | 'HG_ERR_RESOURCE_NOT_FOUND'
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
  | 'HG_ERR_AUTH_INTROSPECTION_UNAVAILABLE'
  | 'HG_ERR_CLAIM_NOT_FORWARDABLE'
  | 'HG_ERR_RATE_LIMITED'
  | 'HG_ERR_PIPELINE_TOO_DEEP'
  | 'HG_ERR_UPSTREAM_BAD_GATEWAY'
  | 'HG_ERR_UPSTREAM_TIMEOUT'
  | 'HG_ERR_UPSTREAM_TLS'
  | 'HG_ERR_UPSTREAM_UNAVAILABLE'
  | 'HG_ERR_NOT_READY'
  | 'HG_ERR_UNSUPPORTED_MEDIA_TYPE'
  | 'HG_ERR_UNSUPPORTED_TRANSFER_CODING'
  | 'HG_ERR_INVALID_BODY'
  | 'HG_ERR_UNPROCESSABLE'
  | 'HG_ERR_CONFLICT'
  | 'HG_ERR_PRECONDITION_FAILED'
  | 'HG_ERR_PRECONDITION_REQUIRED'
  | 'HG_ERR_IDEMPOTENCY_KEY_MISSING'
  | 'HG_ERR_IDEMPOTENCY_KEY_IN_USE'
  | 'HG_ERR_IDEMPOTENCY_KEY_REUSED'
  | 'HG_ERR_RELOAD_INVALID_CONFIG'
  | 'HG_ERR_RELOAD_INCOMPLETE'
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
  // Answered per declared resource as <singular>-not-found / HG_ERR_<SINGULAR>_NOT_FOUND (see ProblemIdentity).
  HG_ERR_RESOURCE_NOT_FOUND: { status: 404, slug: 'resource-not-found', title: 'Not Found', detail: 'No resource exists with this id.' },
  HG_ERR_INVALID_QUERY: {
    status: 400,
    slug: 'invalid-query-parameter',
    title: 'Invalid Query Parameter',
    detail: 'A query parameter is malformed or out of range.',
  },
  HG_ERR_NOT_OWNER: { status: 403, slug: 'not-owner', title: 'Forbidden', detail: 'This token may read only its own customer.' },
  HG_ERR_METHOD_NOT_ALLOWED: {
    status: 405,
    slug: 'method-not-allowed',
    title: 'Method Not Allowed',
    detail: 'This resource does not support the request method.',
  },
  HG_ERR_NOT_ACCEPTABLE: {
    status: 406,
    slug: 'not-acceptable',
    title: 'Not Acceptable',
    detail: 'None of the media types in Accept is available for this resource.',
  },
  HG_ERR_BAD_REQUEST: { status: 400, slug: 'bad-request', title: 'Bad Request', detail: 'The request could not be parsed.' },
  HG_ERR_PAYLOAD_TOO_LARGE: { status: 413, slug: 'payload-too-large', title: 'Content Too Large', detail: 'This resource accepts no request body.' },
  HG_ERR_URI_TOO_LONG: { status: 414, slug: 'uri-too-long', title: 'URI Too Long', detail: 'The request target is longer than this gateway accepts.' },
  HG_ERR_HEADERS_TOO_LARGE: {
    status: 431,
    slug: 'headers-too-large',
    title: 'Request Header Fields Too Large',
    detail: 'The request headers are larger than this gateway accepts.',
  },
  HG_ERR_REQUEST_TIMEOUT: { status: 408, slug: 'request-timeout', title: 'Request Timeout', detail: 'The request was not received in time.' },
  HG_ERR_AUTH_MISSING: {
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'This resource requires a bearer token in the Authorization header.',
  },
  HG_ERR_AUTH_INVALID_REQUEST: {
    status: 400,
    slug: 'invalid-request',
    title: 'Invalid Authorization Request',
    detail: 'The Authorization header is malformed.',
  },
  HG_ERR_AUTH_INVALID_TOKEN: { status: 401, slug: 'invalid-token', title: 'Invalid Token', detail: 'The bearer token is invalid, expired or not yet valid.' },
  HG_ERR_AUTH_INSUFFICIENT_SCOPE: {
    status: 403,
    slug: 'insufficient-scope',
    title: 'Insufficient Scope',
    detail: 'The bearer token lacks the scope this resource requires.',
  },
  HG_ERR_AUTH_KEYS_UNAVAILABLE: {
    status: 503,
    slug: 'keys-unavailable',
    title: 'Service Unavailable',
    detail: 'The keys needed to verify the token could not be fetched; try again shortly.',
  },
  HG_ERR_AUTH_INTROSPECTION_UNAVAILABLE: {
    status: 503,
    slug: 'introspection-unavailable',
    title: 'Service Unavailable',
    detail: "The identity provider's introspection endpoint could not tell whether the token is active; try again shortly.",
  },
  HG_ERR_CLAIM_NOT_FORWARDABLE: {
    status: 400,
    slug: 'claim-not-forwardable',
    title: 'Claim Not Forwardable',
    detail: 'A claim of the bearer token that the upstream service is sent cannot be forwarded.',
  },
  HG_ERR_RATE_LIMITED: { status: 429, slug: 'rate-limited', title: 'Too Many Requests', detail: 'Too many requests; try again after the time in Retry-After.' },
  HG_ERR_PIPELINE_TOO_DEEP: {
    status: 503,
    slug: 'too-many-pipelined-requests',
    title: 'Service Unavailable',
    detail:
      'Too many requests of this connection are waiting for their answers; this one was not processed and the connection is closed: send it again on a new connection.',
  },
  HG_ERR_UPSTREAM_BAD_GATEWAY: {
    status: 502,
    slug: 'bad-gateway',
    title: 'Bad Gateway',
    detail: 'The upstream service answered with an error or an invalid response.',
  },
  HG_ERR_UPSTREAM_TLS: {
    status: 502,
    slug: 'upstream-tls',
    title: 'Bad Gateway',
    detail: 'The upstream service could not be reached over a verified TLS connection.',
  },
  HG_ERR_UPSTREAM_TIMEOUT: { status: 504, slug: 'gateway-timeout', title: 'Gateway Timeout', detail: 'The upstream service did not answer in time.' },
  HG_ERR_UPSTREAM_UNAVAILABLE: {
    status: 503,
    slug: 'upstream-unavailable',
    title: 'Service Unavailable',
    detail: 'The upstream service is failing, so requests to it are paused; try again after Retry-After seconds.',
  },
  HG_ERR_NOT_READY: { status: 503, slug: 'not-ready', title: 'Service Unavailable', detail: 'This instance is not ready to serve traffic.' },
  HG_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    slug: 'unsupported-media-type',
    title: 'Unsupported Media Type',
    detail: 'The request body is not of a media type this method takes.',
  },
  HG_ERR_UNSUPPORTED_TRANSFER_CODING: {
    status: 501,
    slug: 'unsupported-transfer-coding',
    title: 'Not Implemented',
    detail: 'The request body is sent in a transfer coding this gateway does not take (RFC 9112 section 6.1): send it chunked alone, or with a Content-Length.',
  },
  HG_ERR_INVALID_BODY: { status: 400, slug: 'invalid-body', title: 'Invalid Request Body', detail: 'The request body is not valid JSON.' },
  HG_ERR_UNPROCESSABLE: {
    status: 422,
    slug: 'unprocessable-content',
    title: 'Unprocessable Content',
    detail: 'The request body is well-formed but cannot be applied to this resource.',
  },
  HG_ERR_CONFLICT: { status: 409, slug: 'conflict', title: 'Conflict', detail: 'The request conflicts with the current state of the resource.' },
  HG_ERR_PRECONDITION_FAILED: {
    status: 412,
    slug: 'precondition-failed',
    title: 'Precondition Failed',
    detail: 'The resource has changed since the ETag in If-Match was served.',
  },
  HG_ERR_PRECONDITION_REQUIRED: {
    status: 428,
    slug: 'precondition-required',
    title: 'Precondition Required',
    detail: 'This resource is changed only with If-Match: send the ETag of the representation the change is based on.',
  },
  HG_ERR_IDEMPOTENCY_KEY_MISSING: {
    status: 400,
    slug: 'idempotency-key-missing',
    title: 'Idempotency-Key Missing',
    detail: 'This request needs an Idempotency-Key header.',
  },
  HG_ERR_IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    slug: 'idempotency-key-in-use',
    title: 'Idempotency-Key In Use',
    detail: 'A request with this Idempotency-Key is still being processed; retry later.',
  },
  HG_ERR_IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    slug: 'idempotency-key-reused',
    title: 'Idempotency-Key Reused',
    detail: 'This Idempotency-Key was used for a different request.',
  },
  HG_ERR_RELOAD_INVALID_CONFIG: {
    status: 422,
    slug: 'invalid-config',
    title: 'Invalid Configuration',
    detail: 'The configuration was not reloaded: it has problems (see "problems"); the running configuration is kept.',
  },
  HG_ERR_RELOAD_INCOMPLETE: {
    status: 503,
    slug: 'reload-incomplete',
    title: 'Service Unavailable',
    detail: 'Not every worker applied the new configuration (see "workers").',
  },
  HG_ERR_INTERNAL: { status: 500, slug: 'internal-error', title: 'Internal Server Error', detail: 'An unexpected error occurred.' },
});

export const ERROR_CODES = Object.keys(ERRORS) as HgErrorCode[];

/**
 * How a problem names itself when a registry code stands for a family: HG_ERR_RESOURCE_NOT_FOUND
 * is answered for the customer resource as `customer-not-found`, "Customer Not Found",
 * HG_ERR_CUSTOMER_NOT_FOUND, so each declared resource has its own stable problem type.
 */
export interface ProblemIdentity {
  readonly slug: string;
  readonly title: string;
  readonly code: string;
}
/** JSON a problem's extension members may hold. */
export type ProblemValue = string | number | boolean | null | readonly ProblemValue[] | { readonly [member: string]: ProblemValue };

/** A failure we know how to answer. `detail` must be safe to show a client; `cause` never is. */
export class HgError extends Error {
  readonly code: HgErrorCode;
  readonly status: number;
  readonly detail: string;
  /** Extra response headers (WWW-Authenticate, Allow, ...). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** The problem's own type, title and code, where the registry code stands for a family. */
  readonly identity: ProblemIdentity | undefined;
  /** RFC 9457 section 3.2 extension members (e.g. the list of config problems, a 422's failing fields); as safe as `detail`. */
  readonly extensions: Readonly<Record<string, ProblemValue>> | undefined;
  /**
   * Fields for the log line of this error only, never for a client: what the operator needs and a
   * client must not see (the internal service's name, the upstream's own words). Filled in as the
   * error travels up (the upstream client adds the service it came from).
   */
  readonly log: Record<string, string | number>;

  constructor(
    code: HgErrorCode,
    options: {
      detail?: string;
      headers?: Record<string, string>;
      cause?: unknown;
      identity?: ProblemIdentity;
      extensions?: Record<string, ProblemValue>;
      log?: Record<string, string | number>;
    } = {},
  ) {
    const def = ERRORS[code];
    super(`${options.identity?.code ?? code}: ${options.detail ?? def.detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HgError';
    this.code = code;
    this.status = def.status;
    this.detail = options.detail ?? def.detail;
    this.headers = options.headers;
    this.identity = options.identity;
    this.extensions = options.extensions;
    this.log = { ...options.log };
  }
}

/** A field a request body got wrong: a JSON pointer into the body and what is wrong, safe to show. */
export interface FieldError {
  readonly pointer: string;
  readonly detail: string;
}
