import { Deadline } from '../lib/deadline.ts';
import { startExchange, type PlanBody } from '../lib/exchange.ts';
import type { UpstreamObserver } from '../observability/metrics.ts';
import type { Balancer } from './balancer.ts';
import type { Target } from './target.ts';

/** A service's `healthCheck` with a path: what to ask each target, how often, and when to believe it. */
export interface ProbeSettings {
  readonly path: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly expectStatus: number;
  readonly healthyThreshold: number;
  readonly unhealthyThreshold: number;
}

/** A probe reads only the status: the body is drained (its connection kept), never held. */
const DRAIN: PlanBody = () => 'drain';

/** Most bytes of a probe's answer read before its connection is dropped. */
const PROBE_BODY_BYTES = 64 * 1024;

/**
 * The active health check of one service: every `intervalMs`, a GET of `path` to each target
 * through its own pool, under a deadline of `timeoutMs`. `unhealthyThreshold` failures in a row
 * (another status than `expectStatus`, no answer, a time-out) take the target out of the
 * balance; `healthyThreshold` passes in a row bring it back, with slow start. Its timers are
 * unref'd (they never keep the process up) and stop with `stop()`, which the service's client
 * calls when it closes (at shutdown, or when a reload replaces it).
 */
export class HealthProbes {
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #inFlight = new Set<Target>();
  readonly #balancer: Balancer;
  readonly #settings: ProbeSettings;
  readonly #fullPath: string;
  readonly #service: string;
  readonly #observer: UpstreamObserver | undefined;
  #stopped = false;

  constructor(service: string, balancer: Balancer, settings: ProbeSettings, basePath: string, observer: UpstreamObserver | undefined) {
    this.#service = service;
    this.#balancer = balancer;
    this.#settings = settings;
    this.#fullPath = basePath + (settings.path.startsWith('/') ? settings.path : `/${settings.path}`);
    this.#observer = observer;
    for (const target of balancer.targets) {
      const timer = setInterval(() => void this.probe(target), settings.intervalMs);
      timer.unref();
      this.#timers.push(timer);
    }
  }

  /** One probe of `target` (the timer's; tests call it too); skipped while the last one is still under way. */
  async probe(target: Target): Promise<void> {
    if (this.#stopped || this.#inFlight.has(target)) return;
    this.#inFlight.add(target);
    const deadline = new Deadline(this.#settings.timeoutMs, 'the health probe passed its time-out');
    let passed: boolean;
    try {
      const exchange = startExchange(target.pool(), { path: this.#fullPath, method: 'GET', headers: ['accept', '*/*'] }, PROBE_BODY_BYTES, DRAIN, deadline);
      passed = (await exchange.answer).status === this.#settings.expectStatus;
    } catch {
      passed = false;
    } finally {
      deadline.clear();
      this.#inFlight.delete(target);
    }
    if (this.#stopped) return;
    this.#observer?.probeResult(this.#service, target.origin, passed);
    this.#count(target, passed);
  }

  #count(target: Target, passed: boolean): void {
    if (passed) {
      target.probesFailed = 0;
      target.probesPassed += 1;
      if (target.probeDown && target.probesPassed >= this.#settings.healthyThreshold) this.#balancer.probed(target, true);
    } else {
      target.probesPassed = 0;
      target.probesFailed += 1;
      if (!target.probeDown && target.probesFailed >= this.#settings.unhealthyThreshold) this.#balancer.probed(target, false);
    }
  }

  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
  }
}
