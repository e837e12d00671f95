import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS_MS, RequestStats, SERVER_DURATION_BUCKETS_MS, type StatsCell } from './request-stats.ts';
import { StatsHistogram } from './stats-histogram.ts';

/** Counted by the response cache; plain fields so a hit costs one addition. */
export interface CacheTally {
  hits: number;
  misses: number;
  /** Stale entries served (upstream failure, stale-while-revalidate). */
  stale: number;
  evictions: number;
}

/** Counted by the token verifier. */
export interface TokenTally {
  /** Requests whose token was found in the verified-token cache (no crypto). */
  cacheHits: number;
  verified: number;
  rejected: number;
  keysUnavailable: number;
}

/** Counted by API key authentication (auth.apiKeys). */
export interface ApiKeyTally {
  ok: number;
  /** Refused before any lookup: wrong prefix, length, alphabet or checksum. */
  malformed: number;
  /** Not in the key file nor the store, revoked, or past a rotation's overlap. */
  unknown: number;
  /** The store (Redis) could not answer for a key not known here. */
  unavailable: number;
}

/**
 * How one JWKS fetch ended: `ok`, or the key-server failure that kept its keys out (a status
 * other than 200, a body that is not JSON or not a key set, over auth.jwksMaxBytes or the key
 * count cap, no full answer in time, refused, or another connection failure).
 */
export type JwksFetchResult = 'ok' | 'http_status' | 'not_json' | 'not_jwks' | 'too_large' | 'too_many_keys' | 'timeout' | 'refused' | 'unreachable';

/** JWKS fetches by result, counted by the remote key set (a few per hour at most). */
export type JwksTally = Record<JwksFetchResult, number>;

export function emptyJwksTally(): JwksTally {
  return { ok: 0, http_status: 0, not_json: 0, not_jwks: 0, too_large: 0, too_many_keys: 0, timeout: 0, refused: 0, unreachable: 0 };
}

/**
 * How one introspection call ended: the endpoint's answer (`active`, `inactive`), or its failure
 * (a status other than 200, an answer that is not JSON or has no `active` boolean, over
 * auth.introspection.maxBytes, no full answer in time, refused, or another connection failure).
 */
export type IntrospectionResult = 'active' | 'inactive' | 'http_status' | 'malformed' | 'too_large' | 'timeout' | 'refused' | 'unreachable';

/** Counted by the introspector (auth.introspection): plain fields, read at scrape time. */
export interface IntrospectionTally {
  /** Calls to the endpoint by result. */
  readonly calls: Record<IntrospectionResult, number>;
  /** Requests whose token's active answer was found in the introspected-token cache. */
  cacheHits: number;
  /** Requests whose token's inactive answer was found in the cache of inactive tokens. */
  inactiveHits: number;
  /** Tokens answered 503 at once while the introspection breaker was open (no call made). */
  breakerOpen: number;
}

export function emptyIntrospectionTally(): IntrospectionTally {
  return {
    calls: { active: 0, inactive: 0, http_status: 0, malformed: 0, too_large: 0, timeout: 0, refused: 0, unreachable: 0 },
    cacheHits: 0,
    inactiveHits: 0,
    breakerOpen: 0,
  };
}

/** What the introspector reports to: its tally, and each call's time (a histogram). */
export interface IntrospectionObserver {
  readonly introspection: IntrospectionTally;
  introspectionCall(result: IntrospectionResult, ms: number): void;
}

/** An observer that keeps the counts and drops the times (the cluster primary, tests). */
export function countingIntrospectionObserver(): IntrospectionObserver {
  return { introspection: emptyIntrospectionTally(), introspectionCall: () => {} };
}

/** The answers of one scheme by result, read off its tallies at scrape time. */
function authentications(tokens: TokenTally, introspection: IntrospectionTally, apiKeys: ApiKeyTally): [scheme: string, result: string, count: number][] {
  let failed = introspection.breakerOpen;
  for (const [result, count] of Object.entries(introspection.calls)) if (result !== 'active' && result !== 'inactive') failed += count;
  return [
    ['jwt', 'ok', tokens.cacheHits + tokens.verified],
    ['jwt', 'invalid', tokens.rejected],
    ['jwt', 'unavailable', tokens.keysUnavailable],
    ['introspection', 'ok', introspection.cacheHits + introspection.calls.active],
    ['introspection', 'invalid', introspection.inactiveHits + introspection.calls.inactive],
    ['introspection', 'unavailable', failed],
    ['api-key', 'ok', apiKeys.ok],
    ['api-key', 'malformed', apiKeys.malformed],
    ['api-key', 'invalid', apiKeys.unknown],
    ['api-key', 'unavailable', apiKeys.unavailable],
  ];
}

export type UpstreamOutcome = 'ok' | 'not_found' | 'bad_status' | 'bad_body' | 'timeout' | 'unreachable' | 'rejected';

/** Told about every upstream request when it settles (the miss path: prom-client directly), by service name. */
export interface UpstreamObserver {
  /** One attempt settled ('rejected': the circuit breaker refused it, no attempt was made). */
  upstreamResult(service: string, outcome: UpstreamOutcome, ms: number): void;
  /** A failed attempt is being retried (a connection error before any answer). */
  upstreamRetry(service: string): void;
  /** An attempt on one target of a service with several settled (`target`: its origin). */
  targetResult(service: string, target: string, outcome: UpstreamOutcome, ms: number): void;
  /** A target was taken out of its service's balance after failures in a row, for `forMs`. */
  targetEjected(service: string, target: string, forMs: number): void;
  /** An active health probe of a target settled: passed or failed. */
  probeResult(service: string, target: string, passed: boolean): void;
}

/** One target's state for the health gauge: 1 in the balance, 0 out (ejected or failing its probe). */
export interface TargetHealth {
  readonly service: string;
  readonly target: string;
  readonly healthy: boolean;
}

/** Circuit-breaker states as the gauge reports them. */
export const BREAKER_STATE = { closed: 0, half_open: 1, open: 2 } as const;
export type BreakerStateName = keyof typeof BREAKER_STATE;

const UPSTREAM_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type RequestLabel = 'route' | 'method' | 'status';
type ServerLabel = 'http_request_method' | 'http_route' | 'http_response_status_code';

/** OpenTelemetry's http.request.method for a method outside the known set (RequestStats' OTHER). */
function otelMethod(method: string): string {
  return method === 'OTHER' ? '_OTHER' : method;
}

/**
 * The labels of http_server_request_duration_seconds, named as the OpenTelemetry HTTP semantic
 * conventions name the attributes: http.route is left out for a request that matched no route,
 * as the conventions ask, rather than filled with its raw path.
 */
function serverLabels(cell: StatsCell): Partial<Record<ServerLabel, string | number>> {
  const method = otelMethod(cell.method);
  return cell.matched
    ? { http_request_method: method, http_route: cell.route, http_response_status_code: cell.status }
    : { http_request_method: method, http_response_status_code: cell.status };
}

/** Answers of one declared resource by Cache-Status outcome: plain fields, one addition per answer, read at scrape time. */
export interface CacheOutcomes {
  /** Answered from a fresh entry (Cache-Status hit with a positive ttl). */
  hit: number;
  /** Answered from a stale entry (stale-while-revalidate, or stale-if-error after the upstream failed). */
  stale: number;
  /** Forwarded because nothing fresh was cached (fwd=miss), whatever the upstream then answered. */
  miss: number;
  /** Answered by another request's upstream fetch (fwd=miss; collapsed). */
  collapsed: number;
}

const CACHE_OUTCOMES: readonly (keyof CacheOutcomes)[] = ['hit', 'stale', 'miss', 'collapsed'];

/**
 * Every metric of one gateway, in its own prom-client registry (no global state: tests build many
 * gateways in one process). Hot-path counts are plain numbers read at scrape time.
 */
export class Metrics implements UpstreamObserver, IntrospectionObserver {
  readonly registry = new Registry();
  readonly requests = new RequestStats();
  readonly cache: CacheTally = { hits: 0, misses: 0, stale: 0, evictions: 0 };
  readonly tokens: TokenTally = { cacheHits: 0, verified: 0, rejected: 0, keysUnavailable: 0 };
  readonly jwks: JwksTally = emptyJwksTally();
  readonly introspection: IntrospectionTally = emptyIntrospectionTally();
  readonly apiKeys: ApiKeyTally = { ok: 0, malformed: 0, unknown: 0, unavailable: 0 };
  inFlight = 0;
  readonly #cacheOutcomes = new Map<string, CacheOutcomes>();
  /** Ended spans dropped because the trace exporter's queue was full (tracing.exporter.maxQueueSize). */
  spansDropped = 0;
  #cacheEntries: () => number = () => 0;
  #tokenCacheBytes: () => number = () => 0;
  #jwksAgeSeconds: () => number = () => NaN;
  #logLinesDropped: () => number = () => 0;
  #breakerSource: (() => Iterable<readonly [string, BreakerStateName]>) | null = null;
  readonly #upstreamTotal: Counter<'service' | 'outcome'>;
  readonly #upstreamSeconds: Histogram<'service' | 'outcome'>;
  readonly #upstreamRetries: Counter<'service'>;
  readonly #passthroughCuts: Counter<'route' | 'reason'>;
  readonly #introspectionSeconds: Histogram<'result'>;
  readonly #targetTotal: Counter<'service' | 'target' | 'outcome'>;
  readonly #targetSeconds: Histogram<'service' | 'target'>;
  readonly #targetEjections: Counter<'service' | 'target'>;
  readonly #probes: Counter<'service' | 'target' | 'result'>;
  #targetHealth: () => Iterable<TargetHealth> = () => [];

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    const requests = this.requests;
    const self = this;
    new Counter<RequestLabel>({
      name: 'hypergate_http_requests_total',
      help: 'Requests answered, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
      collect() {
        this.reset();
        for (const cell of requests.cells()) this.inc({ route: cell.route, method: cell.method, status: cell.status }, cell.count);
      },
    });
    new StatsHistogram<RequestLabel>(requests, this.registry, {
      name: 'hypergate_http_request_duration_seconds',
      help: 'Time from request to answer in the gateway, in seconds',
      labelNames: ['route', 'method', 'status'],
      boundsMs: LATENCY_BUCKETS_MS,
      labelsOf: (cell) => ({ route: cell.route, method: cell.method, status: cell.status }),
    });
    new StatsHistogram<ServerLabel>(requests, this.registry, {
      name: 'http_server_request_duration_seconds',
      help: 'Duration of HTTP server requests, in seconds (OpenTelemetry http.server.request.duration)',
      labelNames: ['http_request_method', 'http_route', 'http_response_status_code'],
      boundsMs: SERVER_DURATION_BUCKETS_MS,
      labelsOf: serverLabels,
    });
    new Gauge({
      name: 'hypergate_http_requests_in_flight',
      help: 'Requests being answered now',
      registers,
      collect() {
        this.set(self.inFlight);
      },
    });
    const tally = (name: string, help: string, read: () => number): void => {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    };
    tally('hypergate_cache_hits_total', 'Requests answered from a fresh cache entry', () => this.cache.hits);
    tally('hypergate_cache_misses_total', 'Cache lookups that found nothing fresh', () => this.cache.misses);
    tally('hypergate_cache_stale_total', 'Stale cache entries served', () => this.cache.stale);
    const cacheOutcomes = this.#cacheOutcomes;
    new Counter<'resource' | 'outcome'>({
      name: 'hypergate_cache_requests_total',
      help: 'Reads of declared resources answered through the cache, by resource and outcome as Cache-Status tells it (hit, stale, miss, collapsed)',
      labelNames: ['resource', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const [resource, counts] of cacheOutcomes) for (const outcome of CACHE_OUTCOMES) this.inc({ resource, outcome }, counts[outcome]);
      },
    });
    tally('hypergate_cache_evictions_total', 'Cache entries evicted to respect cache.maxEntries or cache.maxBytes', () => this.cache.evictions);
    tally('hypergate_log_lines_dropped_total', 'Log lines dropped because the reader of stdout fell behind by more than log.maxBufferBytes (or was gone)', () =>
      this.#logLinesDropped(),
    );
    tally(
      'hypergate_trace_spans_dropped_total',
      'Ended spans dropped because the trace exporter queue held tracing.exporter.maxQueueSize spans',
      () => this.spansDropped,
    );
    new Gauge({
      name: 'hypergate_cache_entries',
      help: 'Entries in the response cache',
      registers,
      collect() {
        this.set(self.#cacheEntries());
      },
    });
    tally('hypergate_token_cache_hits_total', 'Requests whose token was found in the verified-token cache', () => this.tokens.cacheHits);
    new Counter<'result'>({
      name: 'hypergate_token_verifications_total',
      help: 'Full token verifications (jose), by result',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        this.inc({ result: 'ok' }, self.tokens.verified);
        this.inc({ result: 'invalid' }, self.tokens.rejected);
        this.inc({ result: 'keys_unavailable' }, self.tokens.keysUnavailable);
      },
    });
    new Gauge({
      name: 'hypergate_token_cache_bytes',
      help: 'Bytes charged to the verified-token cache (bounded by auth.tokenCacheMaxBytes)',
      registers,
      collect() {
        this.set(self.#tokenCacheBytes());
      },
    });
    const jwks = this.jwks;
    new Counter<'result'>({
      name: 'hypergate_jwks_fetches_total',
      help: 'JWKS fetches (auth.jwksUrl), by result',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        for (const [result, count] of Object.entries(jwks)) this.inc({ result }, count);
      },
    });
    new Gauge({
      name: 'hypergate_jwks_age_seconds',
      help: 'Seconds since the key set in use was fetched from auth.jwksUrl (NaN: none fetched, or another key source)',
      registers,
      // Each worker fetches its own: across a cluster, the oldest one.
      aggregator: 'max',
      collect() {
        this.set(self.#jwksAgeSeconds());
      },
    });
    const introspection = this.introspection;
    new Counter<'result'>({
      name: 'hypergate_introspection_calls_total',
      help: 'Calls to the token introspection endpoint (auth.introspection.url), by result',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        for (const [result, count] of Object.entries(introspection.calls)) this.inc({ result }, count);
      },
    });
    new Counter<'answer'>({
      name: 'hypergate_introspection_cache_hits_total',
      help: 'Requests whose opaque token was answered from the introspection caches, by the answer kept (active, inactive)',
      labelNames: ['answer'],
      registers,
      collect() {
        this.reset();
        this.inc({ answer: 'active' }, introspection.cacheHits);
        this.inc({ answer: 'inactive' }, introspection.inactiveHits);
      },
    });
    tally(
      'hypergate_introspection_breaker_open_total',
      'Opaque tokens answered 503 at once while the introspection circuit breaker was open',
      () => introspection.breakerOpen,
    );
    this.#introspectionSeconds = new Histogram({
      name: 'hypergate_introspection_duration_seconds',
      help: 'Time of one call to the token introspection endpoint until its whole answer was read, in seconds, by result',
      labelNames: ['result'],
      buckets: UPSTREAM_BUCKETS_S,
      registers,
    });
    new Counter<'scheme' | 'result'>({
      name: 'hypergate_authentications_total',
      help: 'Requests whose credentials were checked, by scheme (jwt, introspection, api-key) and result (ok, invalid, unavailable; malformed: an API key refused before lookup)',
      labelNames: ['scheme', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [scheme, result, count] of authentications(self.tokens, introspection, self.apiKeys)) this.inc({ scheme, result }, count);
      },
    });
    this.#upstreamTotal = new Counter({
      name: 'hypergate_upstream_requests_total',
      help: 'Requests to upstream services, by service and outcome',
      labelNames: ['service', 'outcome'],
      registers,
    });
    this.#upstreamSeconds = new Histogram({
      name: 'hypergate_upstream_request_duration_seconds',
      help: 'Upstream request time until the whole body was read, in seconds',
      labelNames: ['service', 'outcome'],
      buckets: UPSTREAM_BUCKETS_S,
      registers,
    });
    this.#upstreamRetries = new Counter({
      name: 'hypergate_upstream_retries_total',
      help: 'Upstream requests sent again after a refused or reset connection',
      labelNames: ['service'],
      registers,
    });
    this.#passthroughCuts = new Counter({
      name: 'hypergate_passthrough_cut_total',
      help: 'Pass-through answers cut after their status was sent, by route pattern and reason (upstream_lost: the upstream broke off; upstream_idle: it sent nothing for the idle time-out)',
      labelNames: ['route', 'reason'],
      registers,
    });
    this.#targetTotal = new Counter({
      name: 'hypergate_upstream_target_requests_total',
      help: 'Attempts on each target of a service with several targets, by outcome',
      labelNames: ['service', 'target', 'outcome'],
      registers,
    });
    this.#targetSeconds = new Histogram({
      name: 'hypergate_upstream_target_request_duration_seconds',
      help: 'Attempt time on each target of a service with several targets, in seconds',
      labelNames: ['service', 'target'],
      buckets: UPSTREAM_BUCKETS_S,
      registers,
    });
    this.#targetEjections = new Counter({
      name: 'hypergate_upstream_target_ejections_total',
      help: "Times a target was taken out of its service's balance after failures in a row",
      labelNames: ['service', 'target'],
      registers,
    });
    this.#probes = new Counter({
      name: 'hypergate_upstream_probes_total',
      help: 'Active health probes of each target, by result (pass, fail)',
      labelNames: ['service', 'target', 'result'],
      registers,
    });
    new Gauge({
      name: 'hypergate_upstream_target_healthy',
      help: 'Each target of a service with several targets: 1 in the balance, 0 out (ejected or failing its probe)',
      labelNames: ['service', 'target'],
      registers,
      // Each worker keeps its own health: across a cluster, the worst view.
      aggregator: 'min',
      collect() {
        this.reset();
        for (const { service, target, healthy } of self.#targetHealth()) this.set({ service, target }, healthy ? 1 : 0);
      },
    });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  targetResult(service: string, target: string, outcome: UpstreamOutcome, ms: number): void {
    this.#targetTotal.inc({ service, target, outcome });
    this.#targetSeconds.observe({ service, target }, ms / 1000);
  }

  targetEjected(service: string, target: string): void {
    this.#targetEjections.inc({ service, target });
  }

  probeResult(service: string, target: string, passed: boolean): void {
    this.#probes.inc({ service, target, result: passed ? 'pass' : 'fail' });
  }

  /** Where the target health gauge reads from (the current services; they change on reload). */
  setTargetHealthSource(read: () => Iterable<TargetHealth>): void {
    this.#targetHealth = read;
  }

  upstreamResult(service: string, outcome: UpstreamOutcome, ms: number): void {
    this.#upstreamTotal.inc({ service, outcome });
    this.#upstreamSeconds.observe({ service, outcome }, ms / 1000);
  }

  introspectionCall(result: IntrospectionResult, ms: number): void {
    this.#introspectionSeconds.observe({ result }, ms / 1000);
  }

  upstreamRetry(service: string): void {
    this.#upstreamRetries.inc({ service });
  }

  /** A pass-through answer was cut after its status was sent (the client's connection closed under it). */
  passthroughCut(route: string, reason: 'upstream_lost' | 'upstream_idle'): void {
    this.#passthroughCuts.inc({ route, reason });
  }

  /**
   * The outcome counts of one declared resource, asked for once when its routes are built: the
   * same object across reloads, so its counts go on.
   */
  cacheOutcomes(resource: string): CacheOutcomes {
    let counts = this.#cacheOutcomes.get(resource);
    if (counts === undefined) {
      counts = { hit: 0, stale: 0, miss: 0, collapsed: 0 };
      this.#cacheOutcomes.set(resource, counts);
    }
    return counts;
  }

  /** Where the cache-entries gauge reads from (the current cache; it changes on reload). */
  setCacheEntriesSource(read: () => number): void {
    this.#cacheEntries = read;
  }

  /** Where the token-cache bytes gauge reads from (the current verifier; it changes on reload). */
  setTokenCacheBytesSource(read: () => number): void {
    this.#tokenCacheBytes = read;
  }

  /** Where the JWKS age gauge reads from (the current key source; it changes on reload). */
  setJwksAgeSource(read: () => number): void {
    this.#jwksAgeSeconds = read;
  }

  /** Where the dropped-log-lines counter reads from (the process's logger). */
  setLogDroppedSource(read: () => number): void {
    this.#logLinesDropped = read;
  }

  /**
   * The hook for circuit breakers: give it a function listing each service's breaker state, and
   * `hypergate_upstream_breaker_state{service}` (0 closed, 1 half-open, 2 open) appears in /metrics.
   */
  setBreakerStateSource(read: () => Iterable<readonly [string, BreakerStateName]>): void {
    const first = this.#breakerSource === null;
    this.#breakerSource = read;
    if (!first) return;
    const self = this;
    new Gauge({
      name: 'hypergate_upstream_breaker_state',
      help: 'Upstream circuit breaker by service: 0 closed, 1 half-open, 2 open',
      labelNames: ['service'],
      registers: [this.registry],
      // Each worker has its own breaker: across a cluster, the worst one (a sum would mean nothing).
      aggregator: 'max',
      collect() {
        this.reset();
        for (const [service, state] of self.#breakerSource?.() ?? []) this.set({ service }, BREAKER_STATE[state]);
      },
    });
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
