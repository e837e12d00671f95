import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { BREAKER_STATE, type BreakerStateName } from '../observability/metrics.ts';
import type { RejectReason } from './entry-codec.ts';
import type { RedisOp } from './redis-link.ts';

/** How one Redis call ended: answered, an error reply, past its deadline, no connection, or refused by the open breaker. */
export type RedisOutcome = 'ok' | 'error' | 'timeout' | 'down' | 'rejected';

/** What the shared cache tier did for one local miss (docs/operations.md "Running many instances"). */
export type TierOutcome = 'hit' | 'miss' | 'unavailable' | 'waited' | 'stored';

const BUCKETS_S = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

/** The link's state, read at scrape time. */
interface LinkState {
  readonly up: boolean;
  readonly breakerState: BreakerStateName;
  readonly topology: string;
  readonly masters: number;
  readonly masterChanges: number;
}

/**
 * Redis's state, errors and latency in /metrics (registered only when redis.url is set). Every
 * count here is off the hot path (a miss, a rate decision, an invalidation), so prom-client's own
 * counters are fine.
 */
export class RedisMetrics {
  readonly #calls: Counter<'op' | 'outcome'>;
  readonly #seconds: Histogram<'op'>;
  readonly #fallbacks: Counter;
  readonly #tier: Counter<'outcome'>;
  readonly #rejected: Counter<'reason'>;
  readonly #invalidations: Counter<'direction'>;
  readonly #resyncs: Counter;
  readonly #unstored: Counter;
  #link: LinkState | null = null;
  #instances: { readonly count: number } | null = null;

  constructor(registry: Registry) {
    const registers = [registry];
    const self = this;
    new Gauge({
      name: 'hypergate_redis_up',
      help: 'Is the connection to Redis up (1) or not (0)',
      registers,
      // Across a cluster's workers: 0 when any one is cut off.
      aggregator: 'min',
      collect() {
        this.set(self.#link?.up === true ? 1 : 0);
      },
    });
    new Gauge({
      name: 'hypergate_redis_masters',
      help: "Redis masters this instance is connected to, by how Redis is reached (topology: server, sentinel or cluster): a Redis Cluster's masters, else 1 while connected",
      labelNames: ['topology'],
      registers,
      aggregator: 'min',
      collect() {
        if (self.#link !== null) this.set({ topology: self.#link.topology }, self.#link.masters);
      },
    });
    new Gauge({
      name: 'hypergate_redis_master_changes',
      help: 'How often the connection found the Redis master at a new address (a Sentinel failover) since the start',
      registers,
      aggregator: 'max',
      collect() {
        this.set(self.#link?.masterChanges ?? 0);
      },
    });
    new Gauge({
      name: 'hypergate_redis_breaker_state',
      help: 'The Redis circuit breaker: 0 closed, 1 half-open, 2 open',
      registers,
      aggregator: 'max',
      collect() {
        this.set(BREAKER_STATE[self.#link?.breakerState ?? 'closed']);
      },
    });
    new Gauge({
      name: 'hypergate_redis_instances',
      help: "Instances sharing this Redis prefix as last counted (subscribers of its invalidation channel); a cluster rate limit's fallback gives each its share",
      registers,
      aggregator: 'max',
      collect() {
        this.set(self.#instances?.count ?? 0);
      },
    });
    this.#calls = new Counter({
      name: 'hypergate_redis_calls_total',
      help: 'Redis calls by purpose and outcome (ok, error reply, timeout, down, rejected by the open breaker)',
      labelNames: ['op', 'outcome'],
      registers,
    });
    this.#seconds = new Histogram({
      name: 'hypergate_redis_call_duration_seconds',
      help: 'Time of Redis calls that answered, in seconds',
      labelNames: ['op'],
      buckets: BUCKETS_S,
      registers,
    });
    this.#fallbacks = new Counter({
      name: 'hypergate_rate_limit_fallback_total',
      help: 'Cluster rate-limit decisions made by this instance alone because Redis did not answer in time',
      registers,
    });
    this.#tier = new Counter({
      name: 'hypergate_shared_cache_total',
      help: "Local cache misses by what the shared tier did: hit, miss, unavailable, waited (for another instance's fetch), stored",
      labelNames: ['outcome'],
      registers,
    });
    this.#rejected = new Counter({
      name: 'hypergate_shared_tier_rejected_total',
      help: 'Entries read from the shared tier and not adopted, by reason: format, version, identity (written for another path), declaration (rendered under another), freshness, header, body',
      labelNames: ['reason'],
      registers,
    });
    this.#invalidations = new Counter({
      name: 'hypergate_invalidations_total',
      help: 'Invalidation broadcasts: sent, received from other instances, queued (Redis did not take it in time)',
      labelNames: ['direction'],
      registers,
    });
    this.#resyncs = new Counter({
      name: 'hypergate_cache_resyncs_total',
      help: 'Local caches cleared because the invalidation subscription dropped and came back',
      registers,
    });
    this.#unstored = new Counter({
      name: 'hypergate_idempotency_unstored_total',
      help: 'Final answers of writes with an Idempotency-Key that Redis did not take before their claim lapsed (a retry may make the change again)',
      registers,
    });
  }

  watch(link: LinkState): void {
    this.#link = link;
  }

  /** The count hypergate_redis_instances reads (with a cluster rate limit only). */
  watchInstances(size: { readonly count: number }): void {
    this.#instances = size;
  }

  call(op: RedisOp, outcome: RedisOutcome, ms: number): void {
    this.#calls.inc({ op, outcome });
    if (outcome === 'ok' || outcome === 'error') this.#seconds.observe({ op }, ms / 1000);
  }

  fallback(): void {
    this.#fallbacks.inc();
  }

  tier(outcome: TierOutcome): void {
    this.#tier.inc({ outcome });
  }

  rejected(reason: RejectReason): void {
    this.#rejected.inc({ reason });
  }

  invalidation(direction: 'sent' | 'received' | 'queued'): void {
    this.#invalidations.inc({ direction });
  }

  resync(): void {
    this.#resyncs.inc();
  }

  unstored(): void {
    this.#unstored.inc();
  }
}
