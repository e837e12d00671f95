import type { ClaimTable } from '../auth/claims.ts';
import type { Clock } from '../lib/clock.ts';
import { sameValue } from '../lib/same-value.ts';
import { servicesOf, targetsOf } from '../config/service-checks.ts';
import type { Config, UpstreamConfig } from '../config/types.ts';
import type { BreakerStateName, TargetHealth, UpstreamObserver } from '../observability/metrics.ts';
import { UpstreamClient } from './client.ts';
import { tlsOptionsOf } from './tls.ts';

interface Built {
  readonly client: UpstreamClient;
  /** What the client was built from: reused on reload when all of it is the same. */
  readonly settings: readonly unknown[];
}

/**
 * One client (pool, deadline, breaker, headers) per upstream service, chosen by name; "upstream"
 * is the default service. A reload keeps the clients whose settings did not change, with their
 * pooled connections and breaker state, and closes the others once their requests are done.
 */
export class UpstreamServices {
  readonly #built: ReadonlyMap<string, Built>;
  readonly #clock: Clock;

  private constructor(built: ReadonlyMap<string, Built>, clock: Clock) {
    this.#built = built;
    this.#clock = clock;
  }

  /**
   * `urlOf` gives each service's base URL; a service without one (the default service left unset
   * while no resource reads from it: config validation checks that) gets no client.
   */
  static build(
    config: Config,
    previous: UpstreamServices | null,
    urlOf: (name: string, service: UpstreamConfig) => string | null,
    observer: UpstreamObserver,
    clock: Clock,
    claims: ClaimTable,
  ): UpstreamServices {
    const built = new Map<string, Built>();
    for (const [name, service] of servicesOf(config)) {
      // The first target's URL stands for the service's (every target has its path): a service of `targets` has no `url`.
      const url = targetsOf(service, urlOf(name, service))[0]?.url ?? null;
      if (url === null) continue;
      const trustProxy = service.forwarded ? config.server.trustProxy : [];
      const tls = tlsOptionsOf(service, name === 'upstream' ? 'upstream' : `upstreams.${name}`);
      // The TLS files' contents count: a reload after a certificate was renewed makes the client afresh.
      const tlsFiles = [tls.ca, tls.cert, tls.key].map((file) => (Buffer.isBuffer(file) ? file.toString('latin1') : null));
      const settings = [service, url, claims.names, trustProxy, tlsFiles];
      const old = previous === null ? undefined : previous.#built.get(name);
      built.set(
        name,
        old !== undefined && sameValue(old.settings, settings)
          ? old
          : { settings, client: new UpstreamClient(service, url, observer, clock, { name, claims, trustProxy, tls }) },
      );
    }
    return new UpstreamServices(built, clock);
  }

  /** The client of a declared service (config validation guarantees the name). */
  get(name: string): UpstreamClient {
    const built = this.#built.get(name);
    if (built === undefined) throw new Error(`no upstream service "${name}"`);
    return built.client;
  }

  get default(): UpstreamClient {
    return this.get('upstream');
  }

  /** Each service's breaker state, for /metrics. */
  *breakerStates(): Iterable<readonly [string, BreakerStateName]> {
    for (const [name, { client }] of this.#built) yield [name, client.breaker.state];
  }

  /** Each target of each service with several, in the balance or out, for /metrics. */
  *targetHealth(): Iterable<TargetHealth> {
    for (const [service, { client }] of this.#built) {
      const { balancer } = client;
      if (balancer.single) continue;
      const now = this.#clock.now();
      for (const target of balancer.targets) yield { service, target: target.origin, healthy: balancer.available(target, now) };
    }
  }

  /** Each service and its targets, as the start-up log names them. */
  *targetList(): Iterable<{ readonly service: string; readonly targets: readonly string[] }> {
    for (const [service, { client }] of this.#built) yield { service, targets: client.balancer.targets.map((t) => `${t.url} (weight ${t.weight})`) };
  }

  /** The services whose breaker is open now, and whether each is critical (readiness). */
  openBreakers(): { readonly name: string; readonly critical: boolean }[] {
    return [...this.#built].filter(([, { client }]) => client.breaker.state === 'open').map(([name, { client }]) => ({ name, critical: client.critical }));
  }

  /** Closes the clients `next` does not reuse (after a reload); Pool.close lets their requests finish. */
  closeUnusedBy(next: UpstreamServices): void {
    const kept = new Set([...next.#built.values()].map((b) => b.client));
    for (const { client } of this.#built.values()) if (!kept.has(client)) client.close().catch(() => {});
  }

  async close(): Promise<void> {
    await Promise.all([...this.#built.values()].map(({ client }) => client.close()));
  }
}
