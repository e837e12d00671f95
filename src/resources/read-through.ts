import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ClaimValue } from '../auth/claims.ts';
import type { CacheEntry } from '../cache/cache-entry.ts';
import type { Representation } from '../cache/representation.ts';
import { forOneRequest, remainingSeconds, staleSeconds, wasStored, withinStaleWindow } from '../cache/freshness.ts';
import { ALWAYS_HEARING, type InvalidationHearing } from '../cluster/hearing.ts';
import type { GatewayContext } from './context.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { missStatus, staleStatus, type StaleReason } from '../protocol/cache-status.ts';
import type { CacheOutcomes } from '../observability/metrics.ts';
import type { HgRequest, HgResponse } from '../protocol/response.ts';
import { errorTypeOf } from '../observability/traced-step.ts';
import { callOf } from '../upstream/trace-context.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { FormatNegotiation } from './format-negotiation.ts';
import type { ParamValue } from './params.ts';
import { writeRepresentation } from './send-representation.ts';
import type { ServingParts } from './serving-parts.ts';
import type { Source } from './source.ts';

/** A representation read for an assembled answer, and whether it is a stale copy standing in for a failed upstream. */
export interface PartRead {
  readonly rep: Representation;
  readonly stale: boolean;
}

/** What a resource read answers when the upstream fails and no stale entry may answer (route docs list them). */
export const UPSTREAM_ERRORS = ['HG_ERR_UPSTREAM_BAD_GATEWAY', 'HG_ERR_UPSTREAM_TIMEOUT', 'HG_ERR_UPSTREAM_UNAVAILABLE'] as const;
/** What a route of a resource on `service` may answer because of its upstream: its failures, and a claim it cannot be sent. */
export function upstreamErrors(service: { readonly forwardsClaims: boolean }): HgErrorCode[] {
  return service.forwardsClaims ? [...UPSTREAM_ERRORS, 'HG_ERR_CLAIM_NOT_FORWARDABLE'] : [...UPSTREAM_ERRORS];
}
/** Upstream failures a stale entry may answer for (not a 404: the upstream did answer). */
const UPSTREAM_FAILURES: ReadonlySet<HgErrorCode> = new Set(UPSTREAM_ERRORS);

function isUpstreamFailure(err: unknown): err is HgError {
  return err instanceof HgError && UPSTREAM_FAILURES.has(err.code);
}

/** The internal reason behind an error, for the log only. */
function causeOf(err: unknown): string {
  const inner = err instanceof HgError && err.cause !== undefined ? err.cause : err;
  const text = inner instanceof Error ? `${inner.name}: ${inner.message}` : String(inner);
  return err instanceof HgError && inner !== err ? `${err.detail} (${text})` : text;
}

/** Where the reads of a source that is no declared resource (the API root) are counted: nowhere anyone reads. */
function uncounted(): CacheOutcomes {
  return { hit: 0, stale: 0, miss: 0, collapsed: 0 };
}

/** A read that found nothing fresh: made only then, so a hit allocates nothing. */
interface Miss {
  readonly req: IncomingMessage;
  readonly res: HgResponse;
  readonly path: string;
  readonly format: number;
  /** The path's values, copied: the caller's array may be a scratch array it reuses. */
  readonly values: readonly ParamValue[];
  /** The token's kept claims, for the upstream call. */
  readonly claims: readonly ClaimValue[] | undefined;
}

/**
 * Reads one source's resources through the cache: format negotiation, the cache keyed by path
 * (one entry holds every format asked for), one load per path (single-flight), stale answers and
 * cached absences. One per source, so a read names only what differs per request.
 */
export class ReadThrough {
  readonly #ctx: GatewayContext;
  readonly #formats: FormatNegotiation;
  readonly #parts: ServingParts;
  readonly #source: Source;
  /** Whether invalidations of this source's entries can be heard now: the shared state's for a resource that takes writes. */
  readonly #hearing: InvalidationHearing;
  /** Its resource's answers by cache outcome (hypergate_cache_requests_total), resolved once, not per request. */
  readonly #outcomes: CacheOutcomes;
  /** Tracing is on: the cache lookup is a span of its own (#tracedRespond); off, this one check is all it costs. */
  readonly #traced: boolean;

  constructor(parts: ServingParts, source: Source, outcomes: CacheOutcomes = uncounted()) {
    this.#ctx = parts.ctx;
    this.#outcomes = outcomes;
    this.#formats = parts.formats;
    this.#parts = parts;
    this.#source = source;
    this.#hearing = source.takesWrites === true ? parts.ctx.shared.hearing : ALWAYS_HEARING;
    this.#traced = parts.ctx.traced;
  }

  /**
   * The hot path: a fresh cached representation is written without a promise or an allocation.
   * `values` may be a scratch array the caller reuses: it is copied before anything waits.
   * Otherwise see #notFresh. While this instance cannot hear other instances' invalidations, an
   * entry of a resource that takes writes answers only within redis.invalidationGraceMs (hearing.ts):
   * the one check a hit pays for it is `deaf`, a boolean field.
   */
  respond(req: IncomingMessage, res: HgResponse, path: string, values: readonly ParamValue[], claims?: readonly ClaimValue[]): void | Promise<void> {
    if (this.#traced) return this.#tracedRespond(req, res, path, values, claims);
    return this.#respond(req, res, path, values, claims);
  }

  /**
   * The cache lookup as a span (`cache lookup`), ended once the cache has decided: at once for a
   * hit or a stale answer, before the load of a miss (whose upstream attempts are spans of their
   * own). `hypergate.cache.outcome` says what it decided, as Cache-Status and the access log do.
   */
  #tracedRespond(req: IncomingMessage, res: HgResponse, path: string, values: readonly ParamValue[], claims?: readonly ClaimValue[]): void | Promise<void> {
    const trace = (req as HgRequest).trace;
    if (trace === undefined) return this.#respond(req, res, path, values, claims);
    const span = trace.step('cache lookup');
    let answered: void | Promise<void>;
    try {
      // The decision is made before the first wait: the lookup's span ends there.
      answered = this.#respond(req, res, path, values, claims);
    } catch (err) {
      span.end(errorTypeOf(err));
      throw err;
    }
    span.set('hypergate.cache.outcome', res.cacheOutcome);
    span.end();
    return answered;
  }

  #respond(req: IncomingMessage, res: HgResponse, path: string, values: readonly ParamValue[], claims?: readonly ClaimValue[]): void | Promise<void> {
    const format = this.#formats.format(req);
    const { cache, clock } = this.#ctx;
    const now = clock.now();
    const hit = cache.fresh(path, now);
    if (hit !== undefined) {
      if (this.#hearing.deaf && !this.#hearing.mayServe(hit.storedAtMs, now)) return this.#unheard({ req, res, path, format, values: values.slice(), claims });
      const rep = hit.variant(format) ?? this.#parts.entries.addVariant(path, hit, format, this.#source);
      res.cacheOutcome = 'hit';
      this.#outcomes.hit++;
      return writeRepresentation(req, res, rep, now);
    }
    return this.#notFresh({ req, res, path, format, values: values.slice(), claims }, now);
  }

  /**
   * A fresh entry that may have been invalidated unheard (hearing.ts): read again, as a miss (not
   * answered stale meanwhile: stale-while-revalidate would answer with it).
   */
  #unheard(miss: Miss): Promise<void> {
    const { tally } = this.#ctx.cache;
    tally.hits--;
    tally.misses++;
    return this.#miss(miss);
  }

  /**
   * The entry at `path`, fresh from the cache or loaded (single-flight): for a route that needs to
   * know whether another resource exists. A cached or fresh absence throws its 404.
   */
  async fetch(path: string, values: readonly ParamValue[], call: UpstreamCall): Promise<CacheEntry> {
    const entry = this.#ctx.cache.get(path);
    const found = entry !== undefined && entry.expiresAtMs > this.#ctx.clock.now() ? entry : await this.#loadFor(path, values, call);
    if (found.absent) throw this.#source.notFound();
    return found;
  }

  /**
   * The representation in `format` of `key` for an answer assembled from several (embedding.md):
   * what respond would write, as a value. Fresh from the cache, else loaded (single-flight, the
   * shared tier), else on an upstream failure an entry expired less than
   * cache.staleIfErrorSeconds ago, marked stale. A cached or loaded absence throws its 404.
   * `values` must not be a scratch array: it is kept while the load runs.
   */
  async part(key: string, values: readonly ParamValue[], call: UpstreamCall, format: number): Promise<PartRead> {
    const { cache, clock } = this.#ctx;
    const now = clock.now();
    const hit = cache.fresh(key, now);
    if (hit !== undefined && (!this.#hearing.deaf || this.#hearing.mayServe(hit.storedAtMs, now))) return this.#partOf(key, hit, format, false);
    let entry: CacheEntry;
    try {
      entry = await this.#loadFor(key, values, call);
    } catch (err) {
      if (!isUpstreamFailure(err)) throw err;
      const at = this.#ctx.clock.now();
      const stale = this.#staleWithin(key, at, this.#parts.sieMs);
      if (stale === undefined) throw err;
      this.#ctx.logger.warn('embedded a stale entry: the upstream failed', {
        ...err.log,
        path: key,
        code: err.code,
        cause: causeOf(err),
        staleSeconds: staleSeconds(stale, at),
      });
      this.#ctx.cache.tally.stale++;
      return this.#partOf(key, stale, format, true);
    }
    return this.#partOf(key, entry, format, false);
  }

  #partOf(key: string, entry: CacheEntry, format: number, stale: boolean): PartRead {
    // addVariant throws the source's 404 for a cached absence.
    const rep = entry.variant(format) ?? this.#parts.entries.addVariant(key, entry, format, this.#source);
    return { rep, stale };
  }

  /**
   * Nothing fresh. An entry expired less than cache.staleWhileRevalidateSeconds ago answers at
   * once while one background load per path refreshes it (RFC 5861 section 3); otherwise `load`
   * runs once per path.
   */
  #notFresh(miss: Miss, now: number): void | Promise<void> {
    const { loads, swrMs } = this.#parts;
    const stale = swrMs > 0 ? this.#staleWithin(miss.path, now, swrMs) : undefined;
    if (stale === undefined) return this.#miss(miss);
    const { req, res, path } = miss;
    // A caller whose claims cannot be sent starts no refresh; the stale answer needs no upstream.
    if (!loads.has(path) && this.#source.claimProblem?.(miss.claims) == null) {
      loads.load(path, this.#source, miss.values, callOf(req, res.requestId, miss.claims)).catch((err: unknown) => this.#refreshFailed(path, err));
    }
    this.#serveStale(miss, stale, now, 'stale-while-revalidate', false);
  }

  /**
   * A miss: one load per path (single-flight); callers that joined a running load are
   * "collapsed". When the upstream fails, an entry expired less than cache.staleIfErrorSeconds
   * ago answers instead of the error (RFC 5861 section 4).
   */
  async #miss(miss: Miss): Promise<void> {
    const { req, res, path, values } = miss;
    const source = this.#source;
    this.#assertForwardable(miss.claims);
    const { loads, sieMs } = this.#parts;
    const collapsed = loads.joinable(path, source, values) !== undefined;
    res.cacheOutcome = collapsed ? 'collapsed' : 'miss';
    const started = performance.now();
    let entry: CacheEntry;
    try {
      entry = await loads.load(path, source, values, callOf(req, res.requestId, miss.claims));
    } catch (err) {
      if (source.local !== true) res.upstreamMs = performance.now() - started;
      if (!isUpstreamFailure(err)) {
        this.#countForwarded(res);
        throw err;
      }
      const now = this.#ctx.clock.now();
      const stale = this.#staleWithin(path, now, sieMs);
      if (stale === undefined) {
        this.#countForwarded(res);
        throw err;
      }
      this.#ctx.logger.warn('served a stale entry: the upstream failed', {
        ...err.log,
        reqId: res.requestId,
        path,
        code: err.code,
        cause: causeOf(err),
        staleSeconds: staleSeconds(stale, now),
      });
      // The open breaker refuses before anything is sent: then the request never went forward.
      this.#serveStale(miss, stale, now, 'stale-if-error', err.code !== 'HG_ERR_UPSTREAM_UNAVAILABLE');
      return;
    }
    if (source.local !== true) res.upstreamMs = performance.now() - started;
    const rep = entry.variant(miss.format) ?? this.#parts.entries.addVariant(path, entry, miss.format, source);
    const now = this.#ctx.clock.now();
    // A personal answer is never shared: a reader that joined another's load went forward itself (Loads.load).
    const rode = collapsed && !forOneRequest(rep);
    if (collapsed && !rode) res.cacheOutcome = 'miss';
    this.#countForwarded(res);
    // Stored as `storable` decides: not no-store, and not stale on arrival (an upstream max-age=0 or invalid freshness).
    writeRepresentation(req, res, rep, now, missStatus(wasStored(rep, now), rode));
  }

  /** Counts a read that found nothing fresh and was not answered stale: a miss, or one collapsed into another's fetch. */
  #countForwarded(res: HgResponse): void {
    if (res.cacheOutcome === 'collapsed') this.#outcomes.collapsed++;
    else this.#outcomes.miss++;
  }

  /** Throws the 400 when these claims cannot be forwarded to this source's service. */
  #assertForwardable(claims: readonly ClaimValue[] | undefined): void {
    const refused = this.#source.claimProblem?.(claims);
    if (refused != null) throw refused;
  }

  #loadFor(path: string, values: readonly ParamValue[], call: UpstreamCall): Promise<CacheEntry> {
    this.#assertForwardable(call.claims);
    return this.#parts.loads.load(path, this.#source, values, call);
  }

  /** The cached entry for `path` if it may still answer `windowMs` after its expiry (never a cached absence). */
  #staleWithin(path: string, now: number, windowMs: number): CacheEntry | undefined {
    const entry = this.#ctx.cache.get(path);
    return entry !== undefined && !entry.absent && entry.staleAllowed && withinStaleWindow(entry, now, windowMs) ? entry : undefined;
  }

  /** Writes a stale entry with its true Age (above max-age) and says so in Cache-Status. */
  #serveStale(miss: Miss, entry: CacheEntry, now: number, reason: StaleReason, forwarded: boolean): void {
    const { req, res, path, format } = miss;
    const rep = entry.variant(format) ?? this.#parts.entries.addVariant(path, entry, format, this.#source);
    res.cacheOutcome = 'stale';
    this.#ctx.cache.tally.stale++;
    this.#outcomes.stale++;
    writeRepresentation(req, res, rep, now, staleStatus(remainingSeconds(rep, now), reason, forwarded));
  }

  /**
   * A background refresh has nobody to answer: its failure is logged, never thrown. One refused by
   * the open breaker is only debug: the breaker's state is in /metrics and /readyz, and a warning
   * per request while it is open would flood the log.
   */
  #refreshFailed(path: string, err: unknown): void {
    const code = err instanceof HgError ? err.code : 'HG_ERR_INTERNAL';
    const fields = { ...(err instanceof HgError ? err.log : {}), path, code, cause: causeOf(err) };
    if (code === 'HG_ERR_UPSTREAM_UNAVAILABLE') this.#ctx.logger.debug('background refresh refused by the open circuit breaker', fields);
    else if (code !== 'HG_ERR_RESOURCE_NOT_FOUND') this.#ctx.logger.warn('background refresh failed', fields);
  }
}
