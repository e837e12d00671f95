import type { QuotaConfig, QuotaPeriod } from '../config/types.ts';
import type { HgError } from '../lib/errors.ts';
import { CalendarPeriod, type Period } from './calendar.ts';
import { rateLimitPolicy, rateLimited } from './rate-limit.ts';

/** The policies one decision applies: a token bucket, and quotas over calendar periods in UTC. */
export interface PolicySpec {
  /** What the RateLimit fields call the rate; a quota is `<name>-day` or `<name>-month`. */
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly burst: number;
  readonly quotas: readonly QuotaConfig[];
}

/** What counting found, whether in this process or in Redis. */
export interface Tally {
  readonly allowed: boolean;
  /** Whole tokens left in the bucket (after this request's, when it passed). */
  readonly tokens: number;
  /** When the bucket had no token: ms until it has one; else 0. */
  readonly rateWaitMs: number;
  /** Per quota, requests counted in its current period (this one included, when it passed). */
  readonly used: readonly number[];
  /** Bit i set: quota i had no room (its whole count, or this instance's share of it on fallback). */
  readonly spent: number;
}

/** Which policy refused a request: the one that makes it wait longest. */
export type RefusedBy = 'rate' | QuotaPeriod;

/** One decision as answered: the 429 (null when the request passes) and the RateLimit fields of a passing answer. */
export interface Decision {
  readonly refusal: HgError | null;
  readonly refusedBy: RefusedBy | null;
  /** RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-11, sections 3 and 4): one item per policy. */
  readonly policyField: string;
  readonly limitField: string;
}

/** Where a decision is made: this process's counts, or Redis with this process's as the fallback. */
export interface PolicyEngine {
  readonly spec: PolicySpec;
  /** One request of `key` (`s:<subject>` or `a:<address>`). */
  decide(key: string): Decision | Promise<Decision>;
}

/**
 * The RateLimit fields of a set of policies, and its 429. Each policy is one item of each field,
 * as the draft allows several: the rate `"<name>";q=<burst>;w=<s>` as the limiter without plans
 * says it, each quota `"<name>-day";q=<requests>;w=<period s>`; then `r` (requests left) and `t`
 * (seconds until the bucket is full, or until the quota's period ends). A refusal's Retry-After is
 * the latest moment any refusing policy names: a spent monthly quota waits for the first of the
 * next month, 00:00 UTC.
 */
export class PolicyFields {
  readonly spec: PolicySpec;
  readonly #periods: CalendarPeriod[];
  readonly #ratePolicy: string;
  /** The RateLimit-Policy field, and the periods it was written for (a month's `w` is its length). */
  #policyField = '';
  #policyFor: readonly Period[] = [];

  constructor(spec: PolicySpec, nowMs: number) {
    this.spec = spec;
    this.#periods = spec.quotas.map((q) => new CalendarPeriod(q.per, nowMs));
    this.#ratePolicy = rateLimitPolicy(spec.burst, spec.requestsPerSecond, spec.name);
  }

  /** The current period of each quota, in order. */
  periodsAt(nowMs: number): Period[] {
    return this.#periods.map((p) => p.at(nowMs));
  }

  decision(tally: Tally, periods: readonly Period[], nowMs: number): Decision {
    const { spec } = this;
    const policyField = this.#policy(periods);
    let wait = 0;
    let refusedBy: RefusedBy | null = null;
    if (!tally.allowed && tally.rateWaitMs > 0) {
      wait = Math.max(1, Math.ceil(tally.rateWaitMs / 1000));
      refusedBy = 'rate';
    }
    const rateT = tally.rateWaitMs > 0 ? wait : Math.ceil((spec.burst - tally.tokens) / spec.requestsPerSecond);
    const items = [`"${spec.name}";r=${Math.max(0, Math.floor(tally.tokens))};t=${rateT}`];
    spec.quotas.forEach((quota, i) => {
      const period = periods[i] as Period;
      const used = tally.used[i] ?? 0;
      const t = Math.max(1, Math.ceil((period.endMs - nowMs) / 1000));
      items.push(`"${spec.name}-${quota.per}";r=${Math.max(0, quota.requests - used)};t=${t}`);
      if (!tally.allowed && (used >= quota.requests || (tally.spent & (1 << i)) !== 0) && t > wait) {
        wait = t;
        refusedBy = quota.per;
      }
    });
    const limitField = items.join(', ');
    if (tally.allowed) return { refusal: null, refusedBy: null, policyField, limitField };
    // Refused with every policy's count still in reach (a share of it on fallback): wait for the rate.
    if (refusedBy === null) {
      wait = Math.max(1, rateT);
      refusedBy = 'rate';
    }
    return { refusal: rateLimited(wait, policyField, limitField), refusedBy, policyField, limitField };
  }

  #policy(periods: readonly Period[]): string {
    if (this.#policyField !== '' && periods.every((p, i) => p === this.#policyFor[i])) return this.#policyField;
    const items = [this.#ratePolicy];
    this.spec.quotas.forEach((quota, i) => {
      const period = periods[i] as Period;
      items.push(`"${this.spec.name}-${quota.per}";q=${quota.requests};w=${Math.round((period.endMs - period.startMs) / 1000)}`);
    });
    this.#policyFor = periods;
    return (this.#policyField = items.join(', '));
  }
}
