import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A collector's OTLP/HTTP receiver reduced to what a benchmark needs: it reads each export and answers 200. */
export interface SpanSink {
  /** The traces endpoint hypergate exports to. */
  readonly url: string;
  /** Export requests received. */
  readonly exports: () => number;
  close(): Promise<void>;
}

/**
 * Where a --tracing run's spans go: in the harness's own process, like the upstream, so the
 * gateway pays for building, batching and sending its spans as it would to a real collector.
 */
export async function startSpanSink(): Promise<SpanSink> {
  let exports = 0;
  const server = createServer((req, res) => {
    exports++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    exports: () => exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
