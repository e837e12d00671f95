import type { Context } from '@opentelemetry/api';
import { TraceFlags } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config/types.ts';
import type { TraceCounters } from './tracing.ts';

/**
 * The batch span processor behind a bound that counts what it drops. The SDK's own processor
 * drops spans when its buffer is full, but only says so in a diagnostic line; here every sampled
 * span is counted from the moment it ends until its export settled (sent, refused or timed out),
 * and one that would take that count past `maxQueueSize` is dropped and counted
 * (`hypergate_trace_spans_dropped_total`). Nothing here waits: a slow or absent collector fills
 * the queue, never a request.
 */
export class BoundedExport implements SpanProcessor {
  readonly #batches: BatchSpanProcessor;
  readonly #maxQueueSize: number;
  readonly #counters: TraceCounters;
  /** Sampled spans ended and not yet settled by the exporter. */
  #held = 0;

  constructor(exporter: SpanExporter, config: Config['tracing']['exporter'], counters: TraceCounters) {
    this.#maxQueueSize = config.maxQueueSize;
    this.#counters = counters;
    const settling: SpanExporter = {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) => {
        exporter.export(spans, (result) => {
          this.#held -= spans.length;
          done(result);
        });
      },
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
    this.#batches = new BatchSpanProcessor(settling, {
      maxQueueSize: config.maxQueueSize,
      maxExportBatchSize: Math.min(config.maxExportBatchSize, config.maxQueueSize),
      scheduledDelayMillis: config.scheduledDelayMs,
      // The exporter gives up at timeoutMs; the processor waits a little longer so the exporter's answer settles the count.
      exportTimeoutMillis: config.timeoutMs + 1000,
    });
  }

  onStart(span: Span, parentContext: Context): void {
    this.#batches.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.#held >= this.#maxQueueSize) {
      this.#counters.spansDropped++;
      return;
    }
    this.#held++;
    this.#batches.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#batches.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#batches.shutdown();
  }
}
