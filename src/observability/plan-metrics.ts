import { Counter, type Registry } from 'prom-client';

/** What a plan's decision was: allowed, or refused by which of its policies. */
export type PlanOutcome = 'allowed' | 'rate' | 'day' | 'month';

/** The counter of `name` in `registry`, made once: pipelines rebuilt on reload share it. */
function counterOf<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/**
 * Decisions of plans and limits per route in /metrics (docs/authentication.md "Plans and limits
 * per route"). Counted only where plans or route limits are configured; prom-client's counters
 * are fine off the hot path of a gateway without them.
 */
export class PlanMetrics {
  readonly #decisions: Counter<'plan' | 'result' | 'policy'>;
  readonly #routes: Counter<'route'>;
  readonly #undeclared: Counter;

  constructor(registry: Registry) {
    this.#decisions = counterOf(
      registry,
      'hypergate_plan_requests_total',
      'Requests decided by a plan: result allowed or refused, and for a refusal the policy that refused it (rate, day, month)',
      ['plan', 'result', 'policy'],
    );
    this.#routes = counterOf(
      registry,
      'hypergate_route_limit_refused_total',
      'Requests refused by a limit of one route (resources.<name>.rateLimit, writeRateLimit, routes.<name>.rateLimit)',
      ['route'],
    );
    this.#undeclared = counterOf(
      registry,
      'hypergate_plan_undeclared_total',
      'Requests whose credentials named a plan not declared in plans (they took rateLimit.defaultPlan)',
      [],
    );
  }

  decided(plan: string, outcome: PlanOutcome): void {
    if (outcome === 'allowed') this.#decisions.inc({ plan, result: 'allowed', policy: '' });
    else this.#decisions.inc({ plan, result: 'refused', policy: outcome });
  }

  routeRefused(route: string): void {
    this.#routes.inc({ route });
  }

  undeclared(): void {
    this.#undeclared.inc();
  }
}
