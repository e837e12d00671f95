import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sampleOrder, sampleOrderIds } from './data.ts';
import { SampleCustomers, SampleRefusal } from './store.ts';

export interface SampleUpstream {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const CUSTOMER_PATH = /^\/customers\/([1-9][0-9]{0,15})(\/orders(?:\/([1-9][0-9]{0,15}))?)?$/;
const COLLECTION_PATH = /^\/customers\?offset=(0|[1-9][0-9]{0,15})&limit=([1-9][0-9]{0,2})$/;

function send(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** A refusal as an RFC 9457 problem (the gateway shows its detail to the client for 400 and 422). */
function refuse(res: ServerResponse, refusal: SampleRefusal): void {
  const body = JSON.stringify({ type: 'about:blank', title: 'Refused', status: refusal.status, detail: refusal.message });
  res.writeHead(refusal.status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The request body as JSON, at most 64 KiB (the gateway bounds bodies before they get here). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 65_536) throw new SampleRefusal(413, 'the body is too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new SampleRefusal(400, 'the body is not JSON');
  }
}

/** One request to the sample service: reads of customers and orders, and writes of customers. */
async function answer(customers: SampleCustomers, count: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '';
  const method = req.method ?? 'GET';
  const ifMatch = req.headers['if-match'];
  if (url === '/customers' && method === 'POST') {
    const created = customers.create(await readJson(req));
    return send(res, 201, created.record, { etag: created.etag, location: `/customers/${created.record.id}` });
  }
  const page = COLLECTION_PATH.exec(url);
  if (page !== null && method === 'GET') {
    const offset = Number(page[1]);
    const end = Math.min(customers.total, offset + Number(page[2]));
    const items = [];
    for (let id = offset + 1; id <= end; id++) {
      const found = customers.get(id);
      if (found !== null) items.push(found.record);
    }
    return send(res, 200, { items, total: customers.total });
  }
  const match = CUSTOMER_PATH.exec(url);
  const id = match?.[1] === undefined ? 0 : Number(match[1]);
  if (match === null) return send(res, 404, { error: 'not found' });
  if (match[2] === undefined) {
    switch (method) {
      case 'GET': {
        const found = customers.get(id);
        return found === null ? send(res, 404, { error: 'not found' }) : send(res, 200, found.record, { etag: found.etag });
      }
      case 'PUT':
      case 'PATCH': {
        const changed = customers.update(id, await readJson(req), method === 'PUT' ? 'replace' : 'merge', ifMatch);
        return send(res, 200, changed.record, { etag: changed.etag });
      }
      case 'DELETE':
        customers.delete(id, ifMatch);
        res.writeHead(204);
        res.end();
        return;
      default:
        return send(res, 405, { error: 'method not allowed' }, { allow: 'GET, PUT, PATCH, DELETE' });
    }
  }
  if (method !== 'GET') return send(res, 405, { error: 'method not allowed' }, { allow: 'GET' });
  if (id < 1 || id > count || customers.get(id) === null) return send(res, 404, { error: 'not found' });
  if (match[3] === undefined) return send(res, 200, { items: sampleOrderIds(id).map((orderId) => sampleOrder(id, orderId)) });
  const order = sampleOrder(id, Number(match[3]));
  return order === null ? send(res, 404, { error: 'not found' }) : send(res, 200, order);
}

/**
 * The embedded customer service used when no upstream.url is configured, for customers 1..count:
 * GET /customers?offset=&limit= ({items, total}), GET /customers/<id> (with its version as ETag),
 * GET /customers/<id>/orders ({items}) and GET /customers/<id>/orders/<orderId>; and writes:
 * POST /customers, PUT and PATCH (RFC 7396 merge patch) and DELETE /customers/<id>, each under
 * If-Match (412 for another version). Unchanged customers are computed from the id, so every run
 * starts with the same data; changes live in memory (store.ts). Loopback only.
 */
export function createSampleUpstreamServer(count: number): Server {
  const customers = new SampleCustomers(count);
  return createServer((req, res) => {
    answer(customers, count, req, res).catch((err: unknown) => {
      if (err instanceof SampleRefusal) refuse(res, err);
      else send(res, 500, { error: 'internal error' });
    });
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
