import type { ClaimTable } from '../auth/claims.ts';
import type { Clock } from '../lib/clock.ts';
import { sameValue } from '../lib/same-value.ts';
import { servicesOf } from '../config/service-checks.ts';
import type { Config, UpstreamConfig } from '../config/types.ts';
import type { BreakerStateName, UpstreamObserver } from '../observability/metrics.ts';
import { UpstreamClient } from './client.ts';

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

  private constructor(built: ReadonlyMap<string, Built>) {
    this.#built = built;
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
      const url = urlOf(name, service);
      if (url === null) continue;
      const trustProxy = service.forwarded ? config.server.trustProxy : [];
      const settings = [service, url, claims.names, trustProxy];
      const old = previous === null ? undefined : previous.#built.get(name);
      built.set(
        name,
        old !== undefined && sameValue(old.settings, settings)
          ? old
          : { settings, client: new UpstreamClient(service, url, observer, clock, { name, claims, trustProxy }) },
      );
    }
    return new UpstreamServices(built);
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
