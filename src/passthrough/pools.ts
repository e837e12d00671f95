import type { Pool } from 'undici';
import type { ClaimTable } from '../auth/claims.ts';
import { servicesOf, targetsOf } from '../config/service-checks.ts';
import type { Config, UpstreamConfig } from '../config/types.ts';
import type { CircuitBreaker } from '../lib/breaker.ts';
import { undici } from '../lib/undici.ts';
import type { UpstreamCall } from '../upstream/call.ts';
import type { Balancer } from '../upstream/balancer.ts';
import { RequestHeaders } from '../upstream/request-headers.ts';
import type { UpstreamServices } from '../upstream/services.ts';
import type { Target } from '../upstream/target.ts';

/**
 * What a pass-through route needs of its service: where it is, its own pool of connections, the
 * service's breaker (shared with its resources' requests) and the headers the service adds.
 */
export class PassthroughService {
  readonly name: string;
  /** The service's origin, `http://host:port`. */
  readonly origin: string;
  /** The path of the service's URL, without a trailing "/": put before every upstream path. */
  readonly basePath: string;
  /** upstream.timeoutMs: the default for a route's time to the response head. */
  readonly timeoutMs: number;
  readonly breaker: CircuitBreaker;
  /** How problems name the service. */
  readonly who: string;
  readonly #headers: RequestHeaders;
  readonly #connections: number;
  /** The service's targets and their health, shared with its resources' requests; the pools are this service's own. */
  readonly #balancer: Balancer;
  readonly #pools = new Map<Target, Pool>();
  #closed = false;

  constructor(name: string, config: UpstreamConfig, url: string, services: UpstreamServices, claims: ClaimTable) {
    const client = services.get(name);
    const base = new URL(url);
    this.name = name;
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.timeoutMs = config.timeoutMs;
    this.breaker = client.breaker;
    this.who = client.who;
    this.#headers = new RequestHeaders(config, claims, process.env);
    this.#connections = config.connections;
    this.#balancer = client.balancer;
  }

  /** The headers the service adds (its fixed ones, the request id and trace context, Authorization and claims where it forwards them), Accept left to the client. */
  headersFor(call: UpstreamCall): string[] {
    const headers = this.#headers.of(call);
    // The list starts with the JSON Accept resources ask for; a pass-through request carries the client's own.
    const at = headers.indexOf('accept');
    if (at !== -1 && at % 2 === 0) headers.splice(at, 2);
    return headers;
  }

  /**
   * The pool of the target the next pass-through request goes to (the balancer of the service's
   * resources picks it, so an ejected target gets none), each made on first use.
   */
  pool(): Pool {
    const target = this.#balancer.pick(null);
    const made = this.#pools.get(target);
    if (made !== undefined) return made;
    const { Pool: PoolClass, errors } = undici();
    if (this.#closed) throw new errors.ClientClosedError();
    // undici's own head and body time-outs are off: the relay keeps its own (a paused body, waiting
    // for a slow client, is not the upstream idling). Connecting is bounded by the service's deadline.
    const pool = new PoolClass(target.origin, {
      connections: this.#connections,
      pipelining: 1,
      keepAliveTimeout: 4000,
      connect: { ...target.connect, timeout: this.timeoutMs },
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.#pools.set(target, pool);
    return pool;
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.all([...this.#pools.values()].map((pool) => pool.close())).then(() => undefined);
  }
}

interface Built {
  readonly service: PassthroughService;
  /** What it was built from: kept on reload when all of it is the same (and the service's client too, for its breaker). */
  readonly key: string;
  readonly breaker: CircuitBreaker;
}

/**
 * The services pass-through routes use, each with a pool of its own: a long download or an event
 * stream holds its connection for as long as it lasts, and must not hold one the service's
 * resources need. Only services some route names get one. A reload keeps those whose settings
 * (and breaker) did not change, with their connections.
 */
export class PassthroughServices {
  readonly #built: ReadonlyMap<string, Built>;

  private constructor(built: ReadonlyMap<string, Built>) {
    this.#built = built;
  }

  static build(
    config: Config,
    services: UpstreamServices,
    urlOf: (name: string, service: UpstreamConfig) => string | null,
    claims: ClaimTable,
    previous: PassthroughServices | null,
  ): PassthroughServices {
    const used = new Set(Object.values(config.routes).map((r) => r.service));
    const built = new Map<string, Built>();
    for (const [name, service] of servicesOf(config)) {
      if (!used.has(name)) continue;
      // The first target's URL stands for the service's (every target has its path): a service of `targets` has no `url`.
      const url = targetsOf(service, urlOf(name, service))[0]?.url ?? null;
      // A service a route uses has a URL (config validation: embedded-sample.ts).
      if (url === null) continue;
      const key = JSON.stringify([service, url, claims.names]);
      const old = previous === null ? undefined : previous.#built.get(name);
      const breaker = services.get(name).breaker;
      built.set(
        name,
        old !== undefined && old.key === key && old.breaker === breaker
          ? old
          : { key, breaker, service: new PassthroughService(name, service, url, services, claims) },
      );
    }
    return new PassthroughServices(built);
  }

  /** The service a validated route names. */
  get(name: string): PassthroughService {
    const built = this.#built.get(name);
    if (built === undefined) throw new Error(`no pass-through service "${name}"`);
    return built.service;
  }

  /** Closes the pools `next` does not reuse (after a reload); Pool.close lets their streams finish. */
  closeUnusedBy(next: PassthroughServices): void {
    const kept = new Set([...next.#built.values()].map((b) => b.service));
    for (const { service } of this.#built.values()) if (!kept.has(service)) service.close().catch(() => {});
  }

  async close(): Promise<void> {
    await Promise.all([...this.#built.values()].map(({ service }) => service.close()));
  }
}
