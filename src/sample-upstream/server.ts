import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sampleCustomer } from './data.ts';

export interface SampleUpstream {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const CUSTOMER_PATH = /^\/customers\/([1-9][0-9]{0,15})$/;

/**
 * The embedded customer service used when no upstream.url is configured: GET /customers/<id>
 * answers the record for ids 1..count and 404 otherwise. Loopback only.
 */
export function createSampleUpstreamServer(count: number): Server {
  return createServer((req, res) => {
    const match = req.method === 'GET' ? CUSTOMER_PATH.exec(req.url ?? '') : null;
    const id = match?.[1] === undefined ? 0 : Number(match[1]);
    if (id < 1 || id > count) {
      res.writeHead(req.method === 'GET' ? 404 : 405, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
      return;
    }
    const body = JSON.stringify(sampleCustomer(id));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

export async function startSampleUpstream(count: number, port = 0): Promise<SampleUpstream> {
  const server = createSampleUpstreamServer(count);
  server.keepAliveTimeout = 10_000; // outlive the gateway pool's 4 s idle time-out
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
