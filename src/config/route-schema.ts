import { routeLimit } from './plan-schema.ts';
import { boolean, integer, nonEmptyString, section, strings } from './rule.ts';
import { MAX_MS } from './upstream-schema.ts';

/** Methods a pass-through route may take; GET brings HEAD with it. */
export const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * routes.<name>: an endpoint that is not a hypermedia resource (a download, a search, a webhook, an
 * event stream), passed through to an upstream service with its body streamed both ways. Checks
 * that span keys (templates, overlaps with declared paths, the service's name) are
 * src/passthrough/config-checks.ts, run with the rest of validation.
 */
export const ROUTE = section({
  path: nonEmptyString({
    label: 'template',
    doc: 'Public path, e.g. `"/api/files/{path*}"`: literal segments and `{param}` segments (one segment each); the last may be `{param*}`, which takes the rest of the path (one segment or more). It may not match a path a resource, the API root or `/api/openapi.json` answers. See [routes.md](routes.md).',
  }),
  methods: strings({
    nonEmpty: true,
    oneOf: ROUTE_METHODS,
    default: ['GET'],
    doc: 'Methods passed through: `GET` (and so `HEAD`), `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`. Others: 405 with `Allow`.',
  }),
  service: nonEmptyString({
    default: 'upstream',
    doc: "The upstream service: `upstream` or a key of `upstreams`; its breaker, fixed headers, `forwardAuthorization` and `forwardClaims` apply, over a pool of connections apart from its resources' (the service's `connections`).",
  }),
  upstream: nonEmptyString({
    label: 'template',
    doc: 'Upstream path over the same parameters, e.g. `"/files/{path*}"`; the request\'s query string follows it unchanged.',
  }),
  scope: nonEmptyString({ nullable: true, default: null, doc: 'Scope a token needs; `null`: `auth.requiredScope`.' }),
  rateLimit: routeLimit(
    'A limit of this route per subject, per address for anonymous callers, alongside the caller\'s plan: `{"requestsPerSecond", "burst"}`; `null`: none.',
  ),
  public: boolean({
    default: false,
    doc: '`true`: `GET` and `HEAD` pass without credentials (a request that carries an `Authorization` header still has its token verified); other methods still need the scope.',
  }),
  timeoutMs: integer({
    min: 1,
    max: MAX_MS,
    unit: 'ms',
    nullable: true,
    default: null,
    doc: "Time the upstream may take to send its response head, counted from the last byte of the request sent to it (connecting included); over it: 504. `null`: the service's `timeoutMs`.",
  }),
  idleTimeoutMs: integer({
    min: 1,
    max: MAX_MS,
    unit: 'ms',
    default: 60_000,
    doc: "Once the upstream's answer has begun, the longest its body (or a WebSocket, either way) may go without a byte; then the client's connection is cut (its status was sent already). A client that does not read is `server.sendTimeoutMs`'s.",
  }),
  maxBodyBytes: integer({
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    nullable: true,
    default: null,
    doc: 'Largest request body, counted while it streams to the upstream; over it before the upstream answered: 413 and the upstream request is cut. `null`: `server.maxBodyBytes`.',
  }),
  websocket: boolean({
    default: false,
    doc: 'Proxy a WebSocket upgrade (`GET` with `Upgrade: websocket`) once the token is checked; `methods` must include `GET`.',
  }),
});
