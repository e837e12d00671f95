import { boolean, headerValue, integer, list, map, nonEmptyString, path, section, string, strings, url } from './rule.ts';

/** A day: the longest any wait or deadline may be set to, in ms. */
export const MAX_MS = 24 * 60 * 60 * 1000;

/**
 * The keys of one upstream service, apart from `url` (the default service's may be null, for the
 * embedded sample; every other service must name one).
 */
const SERVICE_KEYS = {
  targets: list(
    section({
      url: url({ doc: 'Base URL of this target; every target of a service has the same path.' }),
      weight: integer({ min: 1, max: 1000, default: 1, doc: 'Share of requests this target gets relative to the others.' }),
    }),
    {
      default: [],
      doc: 'Several instances of the service, instead of `url`: `[{"url": "http://10.0.0.1:8000", "weight": 1}, ...]`. Requests are balanced over the healthy ones, each target with its own connection pool; the breaker, deadline and retry stay the service\'s. See [Services with several targets](operations.md#services-with-several-targets).',
    },
  ),
  balance: string({
    oneOf: ['least-request', 'round-robin'],
    default: 'least-request',
    doc: 'How a request picks its target: `least-request` (fewest requests under way relative to weight) or `round-robin` (in turn, by weight).',
  }),
  outlier: section({
    consecutiveFailures: integer({
      min: 0,
      max: 1_000_000,
      default: 5,
      doc: 'Failures in a row (refused, reset, time-out, a status of `statuses`) that take a target out of the balance; `0` never does. Never every target: with all out, the least recently failed one is tried.',
    }),
    baseEjectionMs: integer({
      min: 1,
      max: MAX_MS,
      unit: 'ms',
      default: 5000,
      doc: 'How long a target is out the first time; each further ejection in a row adds as much again.',
    }),
    maxEjectionMs: integer({ min: 1, max: MAX_MS, unit: 'ms', default: 60_000, doc: 'Longest a target is out at once.' }),
    statuses: list(integer({ min: 500, max: 599 }), { default: [502, 503, 504], doc: "Upstream statuses that count as a target's failure." }),
  }),
  // Off by `path: null` (the default) or by `"healthCheck": null`, as the interface names it.
  healthCheck: section(
    {
      path: nonEmptyString({
        nullable: true,
        default: null,
        doc: "Path asked of each target (after the service URL's own path) with `GET`; `null`: no probe. See [Services with several targets](operations.md#services-with-several-targets).",
      }),
      intervalMs: integer({ min: 100, max: MAX_MS, unit: 'ms', default: 5000, doc: 'Time between two probes of one target.' }),
      timeoutMs: integer({ min: 1, max: MAX_MS, unit: 'ms', default: 1000, doc: 'Longest a probe may take; over it: a failed probe.' }),
      expectStatus: integer({ min: 100, max: 599, default: 200, doc: 'The status a healthy target answers.' }),
      healthyThreshold: integer({ min: 1, max: 1000, default: 2, doc: 'Passed probes in a row that bring a target back.' }),
      unhealthyThreshold: integer({ min: 1, max: 1000, default: 3, doc: 'Failed probes in a row that take a target out.' }),
    },
    { nullable: true },
  ),
  slowStartMs: integer({
    min: 0,
    max: MAX_MS,
    unit: 'ms',
    default: 0,
    doc: 'How long a target that comes back takes to reach its full weight (its share grows over this time, so a cold instance is not flooded); `0`: at once.',
  }),
  tls: section({
    ca: path({
      nullable: true,
      default: null,
      doc: "PEM file of the certificate authorities an `https` target's certificate must chain to; `null`: the system's.",
    }),
    servername: string({ nullable: true, default: null, doc: "The name the certificate must hold (and the SNI sent); `null`: the target URL's host." }),
    cert: path({
      nullable: true,
      default: null,
      doc: 'PEM file of the client certificate shown to the service (mutual TLS), with `key`. Read at start and on each reload.',
    }),
    key: path({ nullable: true, default: null, doc: 'PEM file of the private key of `cert`.' }),
    minVersion: string({ oneOf: ['TLSv1.2', 'TLSv1.3'], default: 'TLSv1.2', doc: 'Oldest TLS version accepted.' }),
    rejectUnauthorized: boolean({
      default: true,
      doc: '`false` turns certificate verification off (a warning is logged at start): anyone on the path can then read and change the traffic.',
    }),
  }),
  timeoutMs: integer({
    min: 1,
    max: MAX_MS,
    unit: 'ms',
    default: 2000,
    doc: 'One deadline per upstream request covering connect, headers and the whole body; over it: 504.',
  }),
  connections: integer({ min: 1, max: 10000, default: 64, doc: 'Most connections (and so concurrent requests) to the upstream.' }),
  maxResponseBytes: integer({ min: 1, max: 1024 * 1024 * 1024, unit: 'bytes', default: 1_048_576, doc: 'Largest upstream body accepted; over it: 502.' }),
  breaker: section({
    failures: integer({
      min: 0,
      max: 1_000_000,
      default: 5,
      doc: 'Consecutive failed upstream requests (refused, reset, time-out, 5xx) that open the circuit breaker; `0` never opens it. See [Upstream failures](errors.md#upstream-failures).',
    }),
    cooldownMs: integer({
      min: 1,
      max: MAX_MS,
      unit: 'ms',
      default: 5000,
      doc: 'How long an open breaker answers misses with 503 at once before one probe request may pass.',
    }),
  }),
  forwardAuthorization: boolean({
    default: false,
    doc: "Send the client's `Authorization` header on to this service. Off: the service never sees client tokens. On: its answers are cached only when they say `public`, `s-maxage` or `must-revalidate` (see [Caching](caching.md#entries-and-freshness)), and its resources are cached per token subject unless they declare `vary` or `sharedAcrossIdentities` ([Identity-aware caching](caching.md#identity-aware-caching)).",
  }),
  critical: boolean({
    default: false,
    doc: "Whether this service's open circuit breaker makes `/readyz` answer 503, taking the instance out of a load balancer's rotation. `false`: the instance stays ready (its cached answers and other services still serve; every instance would be taken out alike) and the 200 body of `/readyz` names the failing service. See [Readiness](operations.md#readiness).",
  }),
  headers: map(headerValue(), {
    default: {},
    doc: 'Fixed headers added to every request to this service: name → value, or name → `{"env": "VARIABLE"}` to read the value from the environment at start (secrets stay out of the file and out of every log and error). Names are checked at start; the gateway\'s own headers (`Host`, `Content-Length`, `X-Request-Id`, `traceparent`, `Authorization`, ...) cannot be set.',
  }),
  forwardClaims: map(nonEmptyString({}), {
    default: {},
    doc: 'Header → token claim, e.g. `{"X-Subject": "sub"}`: the claim\'s value goes to the service in that header. A claim that is absent or not a string or number sends no header. Every character of a string value that is not visible ASCII (U+0021 to U+007E), and `%` itself, is sent percent-encoded as UTF-8 (RFC 3986 section 2.1: `Łukasz` goes as `%C5%81ukasz`, a space as `%20`, CR LF as `%0D%0A`); one `decodeURIComponent` gives the claim back. A value that cannot be sent (over `maxClaimBytes`, or a string with a lone surrogate, which has no UTF-8) refuses the request with 400 `claim-not-forwardable` before anything is sent: the request never goes on without the identity. Resources of this service are cached per value of these claims unless they declare `vary` or `sharedAcrossIdentities` ([Identity-aware caching](caching.md#identity-aware-caching)).',
  }),
  forwardHeaders: strings({
    default: [],
    doc: 'Request headers the client may pass to this service, e.g. `["Accept-Language"]` (an allowlist; absent ones are not sent). Hop-by-hop headers, `Authorization` (see `forwardAuthorization`), `Cookie`, `Host` and the headers the gateway sets itself are refused at start. Resources of this service are cached per value of these headers unless they declare `vary` or `sharedAcrossIdentities` ([Identity-aware caching](caching.md#identity-aware-caching)).',
  }),
  exposeHeaders: strings({
    default: [],
    doc: 'Response headers of this service passed to the client on its resources\' reads, e.g. `["Deprecation", "Sunset", "Link", "Content-Language"]` (an allowlist; absent ones are not sent). Stored with the cached entry (in both tiers) and sent on every hit; a 304 carries only what RFC 9110 section 15.4.5 lists. Hop-by-hop headers, `Set-Cookie` and the headers the gateway sets itself are refused at start. See [Headers from the upstream](caching.md#headers-from-the-upstream).',
  }),
  forwarded: boolean({
    default: false,
    doc: "`true`: send `Forwarded` (RFC 7239: `for` and `proto`) and `X-Forwarded-For`/`X-Forwarded-Proto` to this service, built by the gateway: the client's address as `server.trustProxy` resolves it, and `https` only from a TLS connection or a trusted proxy's `X-Forwarded-Proto`. What the client sent in these headers is never passed on otherwise.",
  }),
  // One forwarded claim's value as sent: its header line must fit the service's own limits.
  maxClaimBytes: integer({
    min: 1,
    max: 65_536,
    unit: 'bytes',
    default: 1024,
    doc: "Longest forwarded claim value, as sent (after percent-encoding). A request whose token's claim is longer is refused with 400 `claim-not-forwardable` when it would reach this service (a miss or a write; a cached answer needs no upstream); it never counts against the service's circuit breaker.",
  }),
} as const;

/** The `upstream` section: the default service, named "upstream"; no url starts the embedded sample in dev auth mode (embedded-sample.ts). */
export const DEFAULT_SERVICE = section({
  url: url({
    nullable: true,
    default: null,
    doc: 'Base URL of the default upstream service, named `upstream` (the shipped resources read `GET <url>/customers/<id>`). `null` in dev auth mode (no key source) starts the embedded sample service when a resource reads from this one; with a key source configured it must be set whenever a resource does (else a config problem).',
  }),
  ...SERVICE_KEYS,
});

/** Each `upstreams.<name>`: the same keys, url or targets required; the loader fills the others from the shipped `upstream` defaults. */
export const NAMED_SERVICE = section({
  url: url({ nullable: true, default: null, doc: 'Base URL of the service; or `targets` instead.' }),
  ...SERVICE_KEYS,
});
