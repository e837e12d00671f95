import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/types.ts';

/** A span attribute's value, as OpenTelemetry takes it. */
export type SpanValue = string | number | boolean;

/** One step of a request being timed: an INTERNAL or CLIENT span under the request's SERVER span. */
export interface StepSpan {
  set(name: string, value: SpanValue): void;
  /** Ends the span; `errorType` (the conventions' `error.type`) marks it failed. */
  end(errorType?: string): void;
}

/** One attempt of an upstream request: a CLIENT span and what the upstream is told of it. */
export interface AttemptSpan extends StepSpan {
  /**
   * The trace headers naming this span (name, value, ...), or null when the span is not sampled:
   * an unsampled span is never exported, so the upstream is then told what it would be without
   * tracing (the caller's own `traceparent`, if any).
   */
  readonly headers: readonly string[] | null;
}

/** The trace of one request: its SERVER span and the steps under it. */
export interface RequestTrace {
  /** An INTERNAL span under the request's span; `link` names another request's span (a load it waited on). */
  step(name: string, link?: RequestTrace | null): StepSpan;
  /** A CLIENT span for a call to another system than an upstream service (Redis), with its attributes. */
  call(name: string, attributes: Readonly<Record<string, SpanValue>>): StepSpan;
  /** A CLIENT span for one upstream attempt, with the conventions' attributes (url.full, server.address, ...). */
  attempt(method: string, url: URL, resendCount: number): AttemptSpan;
}

/**
 * Tracing as the request path sees it, with no OpenTelemetry type in it: the module that speaks
 * OpenTelemetry (`otel-tracing.ts`) is imported only when `tracing.enabled` is true, so a gateway
 * that does not trace never loads it.
 */
export interface Tracing {
  /** Starts the SERVER span of a request, continuing the caller's trace context. */
  begin(req: IncomingMessage, clientAddress: string | undefined): RequestTrace;
  /** Ends it with the route template that answered (`''`: none), the status written and the cache's outcome (`''`: none). */
  end(trace: RequestTrace, route: string, status: number, cacheOutcome: string): void;
  /** Exports what is queued, within the exporter's timeout, and stops. */
  shutdown(): Promise<void>;
}

/** What a tracer reports to: how many spans the full queue dropped. */
export interface TraceCounters {
  spansDropped: number;
}

/** The tracer `config.tracing` asks for, or null when tracing is off (then nothing of OpenTelemetry is loaded). */
export async function loadTracing(config: Config['tracing'], counters: TraceCounters): Promise<Tracing | null> {
  if (!config.enabled) return null;
  const { OtelTracing } = await import('./otel-tracing.ts');
  return new OtelTracing(config, counters);
}
