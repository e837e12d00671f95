import type { IncomingMessage } from 'node:http';
import type { HgError } from '../lib/errors.ts';
import type { PlanMetrics } from '../observability/plan-metrics.ts';
import { addRateLimitFields } from '../protocol/rate-limit-fields.ts';
import { limitKey } from './plan-limiter.ts';
import type { Decision, PolicyEngine } from './policy-fields.ts';
import type { Principal } from './principal.ts';
import type { Limiter } from './rate-limit.ts';

/**
 * A limit of one route (a resource's reads or writes, a pass-through route) applied after the
 * gateway's own limiter (`first`: the plan's, or the one without plans; null when there is none):
 * a request passes when both let it, counted per subject (per address for anonymous callers).
 * Failed authentications are charged by `first` alone, once.
 */
export class RouteLimiter implements Limiter {
  readonly #first: Limiter | null;
  readonly #engine: PolicyEngine;
  readonly #route: string;
  readonly #metrics: PlanMetrics;

  constructor(first: Limiter | null, engine: PolicyEngine, route: string, metrics: PlanMetrics) {
    this.#first = first;
    this.#engine = engine;
    this.#route = route;
    this.#metrics = metrics;
  }

  take(subject: string | undefined, address: string | undefined, principal?: Principal, req?: IncomingMessage): HgError | null | Promise<HgError | null> {
    const first = this.#first === null ? null : this.#first.take(subject, address, principal, req);
    if (first instanceof Promise) return first.then((over) => (over === null ? this.#own(subject, address, req) : over));
    return first === null ? this.#own(subject, address, req) : first;
  }

  refusing(address: string | undefined): HgError | null {
    return this.#first === null ? null : this.#first.refusing(address);
  }

  charge(address: string | undefined): void | Promise<void> {
    return this.#first === null ? undefined : this.#first.charge(address);
  }

  #own(subject: string | undefined, address: string | undefined, req: IncomingMessage | undefined): HgError | null | Promise<HgError | null> {
    const decision = this.#engine.decide(limitKey(subject, address));
    if (decision instanceof Promise) return decision.then((d) => this.#settled(d, req));
    return this.#settled(decision, req);
  }

  #settled(decision: Decision, req: IncomingMessage | undefined): HgError | null {
    if (decision.refusal === null) addRateLimitFields(req, decision.policyField, decision.limitField);
    else this.#metrics.routeRefused(this.#route);
    return decision.refusal;
  }
}
