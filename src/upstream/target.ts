import type { ConnectionOptions } from 'node:tls';
import type { Pool } from 'undici';
import { targetsOf } from '../config/service-checks.ts';
import type { UpstreamConfig } from '../config/types.ts';
import { undici } from '../lib/undici.ts';

/**
 * One instance of a service (one URL of its `targets`): its own connection pool, the requests
 * under way on it, and what the service's balancer knows of its health. The balancer
 * (balancer.ts) decides; a target only holds the state.
 */
export class Target {
  readonly url: string;
  /** `http://host:port`: how logs and metrics name the target. */
  readonly origin: string;
  readonly weight: number;
  /** How its connections are made beyond the time-out: the service's TLS settings for an `https` target, else none. */
  readonly connect: Readonly<ConnectionOptions>;
  /** Requests sent to it and not yet settled. */
  outstanding = 0;
  /** The smooth weighted round robin's running score (balancer.ts). */
  current = 0;
  /** Failures in a row since its last success (passive health). */
  failuresInRow = 0;
  /** Ejections in a row: each one keeps it out longer. */
  ejections = 0;
  /** Until when (clock ms) it is out of the balance; 0: never ejected. */
  ejectedUntil = 0;
  /** When it last failed (clock ms): with every target out, the least recently failed one is tried. */
  lastFailedAt = 0;
  /** The active probe found it unhealthy: out until enough probes pass. */
  probeDown = false;
  /** Probes in a row that passed or failed, against the thresholds. */
  probesPassed = 0;
  probesFailed = 0;
  /** When it came back into the balance (clock ms), for slow start; null: it never left. */
  backSince: number | null = null;
  readonly #poolOptions: Pool.Options;
  #pool: Pool | null = null;
  #closed = false;

  /** `poolOptions.connect` holds the time-out; `connect` is added to it. */
  constructor(
    url: string,
    weight: number,
    poolOptions: Pool.Options & { readonly connect: { readonly timeout: number } },
    connect: Readonly<ConnectionOptions>,
  ) {
    const parsed = new URL(url);
    this.url = url;
    this.origin = parsed.origin;
    this.weight = weight;
    this.connect = parsed.protocol === 'https:' ? connect : {};
    this.#poolOptions = parsed.protocol === 'https:' ? { ...poolOptions, connect: { ...connect, ...poolOptions.connect } } : poolOptions;
  }

  /** Its pool, made on the first request (undici loads then: see lib/undici.ts); refused once closed, as a closed pool refuses. */
  pool(): Pool {
    if (this.#pool !== null) return this.#pool;
    const { Pool: PoolClass, errors } = undici();
    if (this.#closed) throw new errors.ClientClosedError();
    this.#pool = new PoolClass(this.origin, this.#poolOptions);
    return this.#pool;
  }

  /** Pool.close lets the requests under way finish. */
  close(): Promise<void> {
    this.#closed = true;
    return this.#pool === null ? Promise.resolve() : this.#pool.close();
  }
}

/** The targets of a service (its `targets`, or its one `url`), each with a pool bounded by the service's settings; `tls` for the `https` ones. */
export function serviceTargets(config: UpstreamConfig, url: string, tls: Readonly<ConnectionOptions>): Target[] {
  const poolOptions = {
    connections: config.connections,
    pipelining: 1,
    keepAliveTimeout: 4000, // 4 s idle, under Node's 5 s server default so we close first
    connect: { timeout: config.timeoutMs },
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
  };
  return targetsOf(config, url).map((t) => new Target(t.url, t.weight, poolOptions, tls));
}
