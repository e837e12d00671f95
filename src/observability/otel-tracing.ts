import type { IncomingMessage } from 'node:http';
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { CompositePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_QUERY,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { Config } from '../config/types.ts';
import { BoundedExport } from './bounded-export.ts';
import type { AttemptSpan, RequestTrace, SpanValue, StepSpan, TraceCounters, Tracing } from './tracing.ts';

/**
 * Tracing over OpenTelemetry's own SDK: the sampler from `OTEL_TRACES_SAMPLER` and its argument
 * (parent-based always-on when unset), the resource from `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES`, spans exported in batches over OTLP/HTTP (JSON) through a bounded
 * queue. Nothing here is global: no provider, propagator or context manager is registered, the
 * parent of each span is passed to it, so two gateways in one process keep their traces apart.
 */
export class OtelTracing implements Tracing {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator: TextMapPropagator;
  readonly #captureQuery: boolean;

  constructor(config: Config['tracing'], counters: TraceCounters) {
    const propagators: TextMapPropagator[] = [];
    if (config.propagators.includes('tracecontext')) propagators.push(new W3CTraceContextPropagator());
    if (config.propagators.includes('b3')) propagators.push(new B3Propagator({ injectEncoding: B3InjectEncoding.SINGLE_HEADER }));
    this.#propagator = new CompositePropagator({ propagators });
    this.#captureQuery = config.captureQuery;
    const { exporter } = config;
    const otlp = new OTLPTraceExporter({ ...(exporter.url === null ? {} : { url: exporter.url }), timeoutMillis: exporter.timeoutMs });
    // The service name defaults to ours; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over it.
    const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'hypergate' }).merge(detectResources({ detectors: [envDetector] }));
    this.#provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BoundedExport(otlp, exporter, counters)],
    });
    this.#tracer = this.#provider.getTracer('hypergate');
  }

  begin(req: IncomingMessage, clientAddress: string | undefined): RequestTrace {
    const parent = this.#propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: req.method ?? 'GET',
      [ATTR_URL_PATH]: q === -1 ? url : url.slice(0, q),
      [ATTR_URL_SCHEME]: 'http',
    };
    if (clientAddress !== undefined) attributes[ATTR_CLIENT_ADDRESS] = clientAddress;
    if (this.#captureQuery && q !== -1) attributes[ATTR_URL_QUERY] = url.slice(q + 1);
    const agent = req.headers['user-agent'];
    if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
    const host = req.headers.host;
    if (host !== undefined) hostAttributes(host, attributes);
    // Named by its method until the route that answers is known (end renames it).
    const method = req.method ?? 'GET';
    const span = this.#tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
    return new OtelRequestTrace(this.#tracer, this.#propagator, method, span, trace.setSpan(parent, span), this.#captureQuery);
  }

  end(requestTrace: RequestTrace, route: string, status: number, cacheOutcome: string): void {
    const { span, method } = requestTrace as OtelRequestTrace;
    if (route !== '') {
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.updateName(`${method} ${route}`);
    }
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (cacheOutcome !== '') span.setAttribute('hypergate.cache.outcome', cacheOutcome);
    // A 4xx is the client's doing: the SERVER span's status stays unset (HTTP semantic conventions).
    if (status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  async shutdown(): Promise<void> {
    await this.#provider.shutdown();
  }
}

/** server.address and server.port from a Host value already checked by the dispatcher. */
function hostAttributes(host: string, attributes: Attributes): void {
  const colon = host.lastIndexOf(':');
  const bracket = host.lastIndexOf(']');
  if (colon > bracket && colon !== -1) {
    attributes[ATTR_SERVER_ADDRESS] = host.slice(0, colon);
    const port = Number(host.slice(colon + 1));
    if (Number.isInteger(port)) attributes[ATTR_SERVER_PORT] = port;
  } else if (host !== '') attributes[ATTR_SERVER_ADDRESS] = host;
}

/**
 * `url` with each query value replaced by `REDACTED` (the HTTP semantic conventions' spelling): an
 * upstream's query is made of the client's parameters, which may say what should not leave the
 * gateway unless tracing.captureQuery allows it.
 */
function redactedQuery(url: URL): string {
  if (url.search === '') return url.href;
  const names = [...url.searchParams.keys()];
  return `${url.origin}${url.pathname}?${names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&')}`;
}

class OtelRequestTrace implements RequestTrace {
  readonly method: string;
  readonly span: Span;
  readonly #tracer: Tracer;
  readonly #propagator: TextMapPropagator;
  readonly #context: Context;
  /** tracing.captureQuery: the query values of an upstream URL are kept; else each is `REDACTED`. */
  readonly #captureQuery: boolean;

  constructor(tracer: Tracer, propagator: TextMapPropagator, method: string, span: Span, context: Context, captureQuery: boolean) {
    this.#tracer = tracer;
    this.method = method;
    this.#propagator = propagator;
    this.span = span;
    this.#context = context;
    this.#captureQuery = captureQuery;
  }

  step(name: string, link?: RequestTrace | null): StepSpan {
    const links = link instanceof OtelRequestTrace && link !== this ? [{ context: link.span.spanContext() }] : undefined;
    return new OtelStep(this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL, links }, this.#context), false);
  }

  call(name: string, attributes: Readonly<Record<string, SpanValue>>): StepSpan {
    return new OtelStep(this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, this.#context), false);
  }

  attempt(method: string, url: URL, resendCount: number): AttemptSpan {
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      [ATTR_SERVER_ADDRESS]: url.hostname,
      [ATTR_SERVER_PORT]: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      [ATTR_URL_FULL]: this.#captureQuery ? url.href : redactedQuery(url),
    };
    if (resendCount > 0) attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = resendCount;
    const span = this.#tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes }, this.#context);
    let headers: string[] | null = null;
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) {
      const carrier: Record<string, string> = {};
      this.#propagator.inject(trace.setSpan(this.#context, span), carrier, defaultTextMapSetter);
      headers = Object.entries(carrier).flat();
    }
    return new OtelAttempt(span, headers);
  }
}

class OtelStep implements StepSpan {
  readonly #span: Span;
  /** A CLIENT span: a 4xx answer is an error there (HTTP semantic conventions). */
  readonly #client: boolean;

  constructor(span: Span, client: boolean) {
    this.#span = span;
    this.#client = client;
  }

  set(name: string, value: SpanValue): void {
    this.#span.setAttribute(name, value);
    if (this.#client && name === ATTR_HTTP_RESPONSE_STATUS_CODE && typeof value === 'number' && value >= 400) {
      this.#span.setAttribute(ATTR_ERROR_TYPE, String(value));
      this.#span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }

  end(errorType?: string): void {
    if (errorType !== undefined) {
      this.#span.setAttribute(ATTR_ERROR_TYPE, errorType);
      this.#span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.#span.end();
  }
}

class OtelAttempt extends OtelStep implements AttemptSpan {
  readonly headers: readonly string[] | null;

  constructor(span: Span, headers: string[] | null) {
    super(span, true);
    this.headers = headers;
  }
}
