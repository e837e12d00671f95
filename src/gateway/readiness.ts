import type { Pipeline } from './pipeline.ts';

/** A readiness check: null when fine, else the reason this instance should get no traffic. */
export type ReadinessCheck = () => string | null;

/** How readiness and its messages name a service. */
const serviceNamed = (name: string): string => (name === 'upstream' ? 'the upstream service' : `the upstream service "${name}"`);

/**
 * What /readyz answers for one gateway: whether this instance should get traffic, which reflects
 * the gateway itself. Not while shutting down, not before the signing keys are loaded (then a
 * fetch is started in the background when the JWKS cooldown allows, so a later probe may see
 * them), and not while any registered check has a reason: among them the circuit breaker of a
 * service marked critical (upstream.critical). A failing service that is not critical leaves the
 * instance ready: every instance would be taken out of rotation alike, and with them the cached
 * answers and the other services they still serve. It and stale keys are warnings instead.
 */
export class Readiness {
  readonly #pipeline: () => Pipeline;
  readonly #checks = new Map<string, ReadinessCheck>();
  closing = false;

  constructor(pipeline: () => Pipeline) {
    this.#pipeline = pipeline;
    // An open breaker of a critical service means this instance would only fail misses fast: send traffic elsewhere.
    this.#checks.set('upstream', () => {
      const open = this.#pipeline()
        .services.openBreakers()
        .filter((s) => s.critical);
      if (open.length === 0) return null;
      return `the circuit breaker is open (${open.map((s) => serviceNamed(s.name)).join(', ')} failing)`;
    });
  }

  addCheck(name: string, check: ReadinessCheck): void {
    this.#checks.set(name, check);
  }

  /** null when ready, else why not (the body of /readyz). */
  reason(): string | null {
    if (this.closing) return 'shutting down';
    const keys = this.#pipeline().keySource.remote;
    if (keys !== null && !keys.loaded) {
      keys.refreshIfDue();
      return `the signing keys are not loaded yet (JWKS ${keys.url}: ${keys.failure?.message ?? 'not fetched yet'})`;
    }
    for (const [name, check] of this.#checks) {
      const reason = check();
      if (reason !== null) return `${name}: ${reason}`;
    }
    return null;
  }

  /**
   * What a ready instance's /readyz says besides "ready": the key set in use is stale (its
   * refreshes fail; it still verifies), and the services not marked critical that are failing.
   */
  warnings(): string[] {
    const { keySource, services } = this.#pipeline();
    const out: string[] = [];
    const keys = keySource.remote;
    if (keys !== null && keys.loaded && keys.failure !== null) {
      out.push(
        `the signing keys are stale: the JWKS at ${keys.url} could not be fetched (${keys.failure.message}); the key set fetched ${Math.round(keys.ageSeconds())} s ago is in use`,
      );
    }
    for (const { name, critical } of services.openBreakers()) {
      const key = name === 'upstream' ? 'upstream.critical' : `upstreams.${name}.critical`;
      if (!critical) out.push(`the upstream service "${name}" is failing: its circuit breaker is open (it is not ${key}, so this instance stays ready)`);
    }
    return out;
  }
}
