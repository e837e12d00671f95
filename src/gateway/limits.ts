import { PlanLimiter } from '../auth/plan-limiter.ts';
import type { PolicyEngine, PolicySpec } from '../auth/policy-fields.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import { RouteLimiter } from '../auth/route-limiter.ts';
import type { SharedState } from '../cluster/shared-state.ts';
import type { Config, RouteLimitConfig } from '../config/types.ts';
import { sameValue } from '../lib/same-value.ts';
import type { Logger } from '../observability/logger.ts';
import { PlanMetrics } from '../observability/plan-metrics.ts';
import type { Registry } from 'prom-client';

/** An engine with what it was made from, so a reload that changes none of it keeps its counts. */
interface MadeEngine {
  readonly made: unknown;
  readonly engine: PolicyEngine;
}

/** The rate limits of one pipeline: the gateway's limiter, and each route's. */
export interface Limits {
  /** The limiter every route takes from: the plans' (over the one without plans), or that one alone; null when none is on. */
  readonly limiter: Limiter | null;
  /** Plans or limits per route are configured: passing answers carry the RateLimit fields. */
  readonly fields: boolean;
  /**
   * The limiter of a route with its own limit (`route`: `resources.<name>.rateLimit`,
   * `resources.<name>.writeRateLimit`, `routes.<name>.rateLimit`): the gateway's, then the route's;
   * the gateway's alone when `limit` is null.
   */
  readonly forRoute: (route: string, limit: RouteLimitConfig | null) => Limiter | null;
  /** The engines made, by whose policies they count: a reload lends them to the next pipeline. */
  readonly engines: ReadonlyMap<string, MadeEngine>;
}

/** What building the limits needs of the gateway. */
export interface LimitParts {
  readonly shared: SharedState;
  readonly registry: Registry;
  readonly logger: Logger;
}

/** Plans or limits per route are declared: without them the gateway's limits are exactly the limiter without plans. */
export function limitsConfigured(config: Config): boolean {
  if (Object.keys(config.plans).length > 0) return true;
  if (Object.values(config.routes).some((r) => r.rateLimit !== null)) return true;
  return Object.values(config.resources).some((r) => r.rateLimit !== null || r.writeRateLimit !== null);
}

/**
 * The limits for `config`. `base` is the limiter without plans (kept across reloads by the
 * pipeline). Engines of plans and route limits whose settings, realm and rateLimit did not change
 * are taken from `previous`, so a reload resets no client's counts.
 */
export function buildLimits(config: Config, base: Limiter | null, realm: string, previous: Limits | null, parts: LimitParts): Limits {
  if (!limitsConfigured(config)) return { limiter: base, fields: false, forRoute: () => base, engines: new Map() };
  const metrics = new PlanMetrics(parts.registry);
  const engines = new Map<string, MadeEngine>();
  const engineOf = (policies: string, spec: PolicySpec): PolicyEngine => {
    const made = { spec, realm, scope: config.rateLimit.scope, maxKeys: config.rateLimit.maxKeys };
    const before = previous?.engines.get(policies);
    const engine = before !== undefined && sameValue(before.made, made) ? before.engine : parts.shared.policies(spec, policies, realm, config.rateLimit);
    engines.set(policies, { made, engine });
    return engine;
  };
  const plans = new Map<string, PolicyEngine>();
  for (const [name, plan] of Object.entries(config.plans)) plans.set(name, engineOf(`p:${name}`, { name, ...plan }));
  const { defaultPlan, anonymousPlan } = config.rateLimit;
  const limiter = plans.size === 0 ? base : new PlanLimiter(base, { engines: plans, defaultPlan, anonymousPlan }, metrics, parts.logger);
  const forRoute = (route: string, limit: RouteLimitConfig | null): Limiter | null => {
    if (limit === null) return limiter;
    const spec = { name: 'route', requestsPerSecond: limit.requestsPerSecond, burst: limit.burst, quotas: [] };
    return new RouteLimiter(limiter, engineOf(`r:${route}`, spec), route, metrics);
  };
  return { limiter, fields: true, forRoute, engines };
}
