import type { CacheEntry } from '../cache/cache-entry.ts';
import { forOneRequest } from '../cache/freshness.ts';
import type { GatewayContext } from './context.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { RequestTrace } from '../observability/tracing.ts';
import { tracedStep } from '../observability/traced-step.ts';
import { JSON_INDEX } from '../hypermedia/formats.ts';
import { keyGroups } from './identity.ts';
import type { ParamValue } from './params.ts';
import type { Source } from './source.ts';

/**
 * An answer a shared cache may not store (no-store, private, no-cache: RFC 9111 sections 3 and
 * 5.2.2) belongs to the request that caused it: it was made for that request's identity.
 */
function personal(entry: CacheEntry): boolean {
  const json = entry.variant(JSON_INDEX);
  return json !== undefined && forOneRequest(json);
}

/**
 * The loads under way, one per cache key (single-flight): `path` below is the key, which for a
 * resource that varies carries the identity (identity.ts), so no load is joined across identities: each takes a cache load ticket, so it cannot
 * store over a later invalidation, and asks the shared tier (Redis) before its source when there is one.
 */
export class Loads {
  readonly #ctx: GatewayContext;
  readonly #flights = new SingleFlight<CacheEntry>();
  /** The trace of the request that started each load under way (tracing.enabled): those that join it link to it. */
  readonly #leaders = new Map<string, RequestTrace>();

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
  }

  /** Is a load of `path` under way (joinable or not)? */
  has(path: string): boolean {
    return this.#flights.has(path);
  }

  /**
   * The load under way for `path` if a new reader may join it: not when the path or one of its
   * groups was invalidated after it began. Such a load may bring the version a write (or purge)
   * replaced, and a reader that starts after the write was answered must not get it; those that
   * joined before the invalidation overlapped the write and still share it.
   */
  joinable(path: string, source: Source, values: readonly ParamValue[]): Promise<CacheEntry> | undefined {
    const running = this.#flights.get(path);
    if (running === undefined || this.#ctx.cache.invalidatedSince(path, keyGroups(path, source.groups(values)), running.stamp)) return undefined;
    return running.promise;
  }

  /**
   * One load per path at a time (see joinable); the cache's ticket keeps it from storing over a
   * later invalidation. A reader that joined a load whose answer turns out to be personal (see
   * `personal`) did not get it: it loads for itself, with its own call (its own identity).
   */
  load(path: string, source: Source, values: readonly ParamValue[], call: UpstreamCall): Promise<CacheEntry> {
    const running = this.joinable(path, source, values);
    if (running !== undefined) {
      const joined = running.then((entry) => (personal(entry) ? this.#alone(path, source, values, call) : entry));
      // A reader that waits on another's load: a span linked to the request whose load it is.
      return call.trace === undefined ? joined : this.#traceWait(call.trace, path, joined);
    }
    const { cache, tier } = this.#ctx;
    const ticket = cache.beginLoad();
    const shape = source.shared;
    // With a shared tier (Redis), it is asked first and the upstream only when it has nothing.
    const work =
      tier === null || shape === undefined
        ? async () => source.load(path, values, call, ticket)
        : async () =>
            tier.load({ path, shape, groups: keyGroups(path, source.groups(values)), trace: call.trace }, ticket, source, () =>
              source.load(path, values, call, ticket),
            );
    if (call.trace === undefined) return this.#flights.start(path, ticket, work, () => cache.endLoad(ticket));
    this.#leaders.set(path, call.trace);
    return this.#flights.start(path, ticket, work, () => {
      this.#leaders.delete(path);
      cache.endLoad(ticket);
    });
  }

  #traceWait(trace: RequestTrace, path: string, joined: Promise<CacheEntry>): Promise<CacheEntry> {
    const leader = this.#leaders.get(path);
    return tracedStep(
      trace,
      'wait for load',
      () => joined,
      () => undefined,
      leader,
    ) as Promise<CacheEntry>;
  }

  /**
   * A load for one reader only: no flight to join (its answer is made for this call's identity)
   * and no shared tier (which holds no personal answer).
   */
  async #alone(path: string, source: Source, values: readonly ParamValue[], call: UpstreamCall): Promise<CacheEntry> {
    const { cache } = this.#ctx;
    const ticket = cache.beginLoad();
    try {
      return await source.load(path, values, call, ticket);
    } finally {
      cache.endLoad(ticket);
    }
  }
}
