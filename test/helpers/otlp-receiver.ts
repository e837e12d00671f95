import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gate } from './wait.ts';

/** OTLP's span kinds (opentelemetry-proto trace.proto, SpanKind). */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
/** OTLP's status codes (Status.StatusCode). */
export const STATUS = { UNSET: 0, OK: 1, ERROR: 2 } as const;

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };

/** One span as an OTLP/HTTP JSON export carries it, its attributes read into a plain object. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly status: number;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** The resource's attributes (service.name, ...). */
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

export interface OtlpReceiver {
  /** The traces endpoint: http://127.0.0.1:<port>/v1/traces. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (answered or held). */
  readonly posts: () => number;
  /** Holds every answer from now on until the returned release() (a slow collector). */
  hold(): { release(): void };
  close(): Promise<void>;
}

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? '';
}

function attributesOf(list: readonly { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) out[key] = valueOf(value);
  return out;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: AnyValue }[];
        status?: { code?: number };
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}

/**
 * An OTLP/HTTP collector written for the tests: it takes the JSON the gateway's exporter posts to
 * /v1/traces (ids as hex strings, as the OTLP JSON mapping has them) and keeps every span.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let posts = 0;
  let held: Promise<void> | null = null;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    posts++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (): void => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ExportRequest;
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                status: s.status?.code ?? 0,
                links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
                resource,
              });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      };
      if (held === null) answer();
      else void held.then(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    posts: () => posts,
    hold: () => {
      const g = gate();
      held = g.promise;
      return {
        release: () => {
          held = null;
          g.open();
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
