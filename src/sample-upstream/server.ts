import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sampleCustomer, sampleOrder, sampleOrderIds } from './data.ts';

export interface SampleUpstream {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const CUSTOMER_PATH = /^\/customers\/([1-9][0-9]{0,15})(\/orders(?:\/([1-9][0-9]{0,15}))?)?$/;
const COLLECTION_PATH = /^\/customers\?offset=(0|[1-9][0-9]{0,15})&limit=([1-9][0-9]{0,2})$/;

function send(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The embedded customer service used when no upstream.url is configured, for customers 1..count:
 * GET /customers?offset=&limit= ({items, total}), GET /customers/<id>,
 * GET /customers/<id>/orders ({items}) and GET /customers/<id>/orders/<orderId>; 404 otherwise.
 * Everything is computed from the ids, so every run serves the same data. Loopback only.
 */
export function createSampleUpstreamServer(count: number): Server {
  return createServer((req, res) => {
    const url = req.url ?? '';
    if (req.method !== 'GET') return send(res, 405, { error: 'method not allowed' });
    const page = COLLECTION_PATH.exec(url);
    if (page !== null) {
      const offset = Number(page[1]);
      const end = Math.min(count, offset + Number(page[2]));
      const items = [];
      for (let id = offset + 1; id <= end; id++) items.push(sampleCustomer(id));
      return send(res, 200, { items, total: count });
    }
    const match = CUSTOMER_PATH.exec(url);
    const id = match?.[1] === undefined ? 0 : Number(match[1]);
    if (match === null || id < 1 || id > count) return send(res, 404, { error: 'not found' });
    if (match[2] === undefined) return send(res, 200, sampleCustomer(id));
    if (match[3] === undefined) return send(res, 200, { items: sampleOrderIds(id).map((orderId) => sampleOrder(id, orderId)) });
    const order = sampleOrder(id, Number(match[3]));
    return order === null ? send(res, 404, { error: 'not found' }) : send(res, 200, order);
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
