import type { Pipeline } from './pipeline.ts';

/** A readiness check: null when fine, else the reason this instance should get no traffic. */
export type ReadinessCheck = () => string | null;

/**
 * What /readyz answers for one gateway: not while shutting down, not before the signing keys are
 * loaded (then a fetch is started in the background when the JWKS cooldown allows, so a later
 * probe may see them), and not while any registered check (the circuit breaker, ...) has a reason.
 */
export class Readiness {
  readonly #pipeline: () => Pipeline;
  readonly #checks = new Map<string, ReadinessCheck>();
  closing = false;

  constructor(pipeline: () => Pipeline) {
    this.#pipeline = pipeline;
    // An open breaker means this instance would only fail misses fast: send traffic elsewhere.
    this.#checks.set('upstream', () => {
      const open = this.#pipeline().services.openBreakers();
      if (open.length === 0) return null;
      return `the circuit breaker is open (${open.map((name) => (name === 'upstream' ? 'the upstream service' : `the upstream service "${name}"`)).join(', ')} failing)`;
    });
  }

  addCheck(name: string, check: ReadinessCheck): void {
    this.#checks.set(name, check);
  }

  /** null when ready, else why not (the body of /readyz). */
  reason(): string | null {
    if (this.closing) return 'shutting down';
    const keys = this.#pipeline().keySource.remote;
    // A stale key set (refreshes failing) still verifies: ready, and the log says it is stale.
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
}
