import type { IncomingMessage } from 'node:http';
import type { HgError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { PlanMetrics } from '../observability/plan-metrics.ts';
import { addRateLimitFields } from '../protocol/rate-limit-fields.ts';
import type { Decision, PolicyEngine } from './policy-fields.ts';
import { ANONYMOUS, type Principal } from './principal.ts';
import type { Limiter } from './rate-limit.ts';

/** Plan names not declared that were logged, remembered up to this many (a log line each, once). */
const MAX_LOGGED_NAMES = 1000;

/** The declared plans, each with where its decisions are made, and which plan a caller naming none takes. */
export interface PlanBook {
  readonly engines: ReadonlyMap<string, PolicyEngine>;
  /** rateLimit.defaultPlan; null: such callers are held to the limiter without plans. */
  readonly defaultPlan: string | null;
  /** rateLimit.anonymousPlan; null: anonymous callers are held to the limiter without plans. */
  readonly anonymousPlan: string | null;
}

/** The one key naming whose requests a decision counts: the subject, or the address when there is none. */
export function limitKey(subject: string | undefined, address: string | undefined): string {
  return subject === undefined ? `a:${address ?? ''}` : `s:${subject}`;
}

/**
 * Rate limits and quotas per plan. A principal's plan is the one its credentials name when
 * declared (a name not declared takes the default plan, logged once per name and counted), else
 * rateLimit.defaultPlan; an anonymous caller's is rateLimit.anonymousPlan. A caller left without a
 * plan is held to the limiter without plans (`base`, rateLimit.requestsPerSecond; none when it is
 * off). Failed authentications are charged to the address as without plans (`base`). A passing
 * answer carries the plan's RateLimit fields; a refusal is the plan's 429.
 */
export class PlanLimiter implements Limiter {
  readonly #base: Limiter | null;
  readonly #book: PlanBook;
  readonly #metrics: PlanMetrics;
  readonly #logger: Logger;
  readonly #logged = new Set<string>();

  constructor(base: Limiter | null, book: PlanBook, metrics: PlanMetrics, logger: Logger) {
    this.#base = base;
    this.#book = book;
    this.#metrics = metrics;
    this.#logger = logger;
  }

  take(subject: string | undefined, address: string | undefined, principal?: Principal, req?: IncomingMessage): HgError | null | Promise<HgError | null> {
    const name = this.#planOf(principal);
    const engine = name === null ? undefined : this.#book.engines.get(name);
    if (name === null || engine === undefined) return this.#base === null ? null : this.#base.take(subject, address);
    const decision = engine.decide(limitKey(subject, address));
    if (decision instanceof Promise) return decision.then((d) => this.#settled(name, d, req));
    return this.#settled(name, decision, req);
  }

  refusing(address: string | undefined): HgError | null {
    return this.#base === null ? null : this.#base.refusing(address);
  }

  charge(address: string | undefined): void | Promise<void> {
    return this.#base === null ? undefined : this.#base.charge(address);
  }

  #settled(plan: string, decision: Decision, req: IncomingMessage | undefined): HgError | null {
    this.#metrics.decided(plan, decision.refusedBy ?? 'allowed');
    if (decision.refusal === null) addRateLimitFields(req, decision.policyField, decision.limitField);
    return decision.refusal;
  }

  #planOf(principal: Principal | undefined): string | null {
    const { engines, defaultPlan, anonymousPlan } = this.#book;
    if (principal === undefined || principal === ANONYMOUS) return anonymousPlan;
    const named = principal.plan;
    if (named === undefined || engines.has(named)) return named ?? defaultPlan;
    this.#metrics.undeclared();
    if (!this.#logged.has(named) && this.#logged.size < MAX_LOGGED_NAMES) {
      this.#logged.add(named);
      this.#logger.warn(`credentials name the plan "${named}", which is not declared in plans: the default plan applies`, {
        event: 'plan_undeclared',
        plan: named,
        defaultPlan,
      });
    }
    return defaultPlan;
  }
}
