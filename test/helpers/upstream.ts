import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Headers the test upstream adds to an answer; an array is sent as one field line per value. */
export type UpstreamHeaders = Record<string, string | string[]>;

/** What the test upstream does for one request. */
export type UpstreamBehaviour =
  | { readonly kind: 'json'; readonly status?: number; readonly body: unknown; readonly headers?: UpstreamHeaders }
  | { readonly kind: 'raw'; readonly status: number; readonly body: string | Buffer; readonly headers?: UpstreamHeaders }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' }
  /**
   * A head promising more (status 200 and JSON unless `status`/`headers` say otherwise), the first
   * bytes of the body (`sent`, default '{"id":'), then a reset mid-body.
   */
  | { readonly kind: 'cut'; readonly sent?: string; readonly status?: number; readonly headers?: UpstreamHeaders }
  /** A chunked JSON body of this many bytes, with no Content-Length to warn the reader. */
  | { readonly kind: 'chunked'; readonly bytes: number }
  /** A head (200 and JSON unless `status`/`headers` say otherwise), then a space every intervalMs, `chunks` times, then '{}'. */
  | { readonly kind: 'drip'; readonly chunks: number; readonly intervalMs: number; readonly status?: number; readonly headers?: UpstreamHeaders }
  | { readonly kind: 'delay'; readonly ms: number; readonly then: UpstreamBehaviour }
  /** Holds the request until `until` settles: the test decides when the upstream answers. */
  | { readonly kind: 'wait'; readonly until: Promise<unknown>; readonly then: UpstreamBehaviour }
  /** The n-th request to this behaviour gets steps[n] (the last step repeats). */
  | { readonly kind: 'sequence'; readonly steps: readonly UpstreamBehaviour[] };

export interface TestUpstream {
  readonly url: string;
  /** Requests seen, by path. */
  hits(path?: string): number;
  readonly paths: string[];
  readonly headersSeen: IncomingMessage['headers'][];
  /** Every request as received: method, path and its whole body (writes), in order. */
  readonly requests: { readonly method: string; readonly path: string; readonly body: string }[];
  /** The client port of the connection each request came on, in order (which socket carried it). */
  readonly remotePorts: number[];
  /** Connections accepted since start (or the last reset). */
  connections(): number;
  /** Most connections open at once since start (or the last reset). */
  maxOpenConnections(): number;
  /** Requests received and not yet answered (or reset). */
  active(): number;
  /** Override the answer for a path, or for one method on a path ('PUT /customers/1'), or '*' for all. */
  on(path: string, behaviour: UpstreamBehaviour): void;
  reset(): void;
  close(): Promise<void>;
}

/** Default record: the seed's customer fields plus some the gateway must not expose by default. */
export function defaultRecord(id: number): Record<string, unknown> {
  return { id, name: `Customer ${id}`, status: id % 2 === 0 ? 'active' : 'inactive', email: `c${id}@example.com`, internalNote: 'secret' };
}

/** Customers the default collection holds (1..COLLECTION_TOTAL), so paging has a last page. */
export const COLLECTION_TOTAL = 45;

/** Default orders: every customer has two, ids <customerId>01 and <customerId>02. */
export function defaultOrder(customerId: number, orderId: number): Record<string, unknown> | null {
  const k = orderId - customerId * 100;
  if (k < 1 || k > 2) return null;
  return {
    id: orderId,
    status: k === 1 ? 'paid' : 'shipped',
    placedAt: '2024-05-0' + k + 'T10:00:00.000Z',
    total: 10 * k + 0.5,
    currency: 'EUR',
    warehouse: 'internal',
  };
}

/** The default answer for a path: the collection, a customer, its orders or one order, or 404. */
function defaultAnswer(path: string): UpstreamBehaviour {
  const page = /^\/customers\?offset=(\d+)&limit=(\d+)$/.exec(path);
  if (page) {
    const offset = Number(page[1]);
    const items = [];
    for (let id = offset + 1; id <= Math.min(COLLECTION_TOTAL, offset + Number(page[2])); id++) items.push(defaultRecord(id));
    return { kind: 'json', body: { items, total: COLLECTION_TOTAL } };
  }
  const match = /^\/customers\/(\d+)(\/orders(?:\/(\d+))?)?$/.exec(path);
  const id = match ? Number(match[1]) : 0;
  if (match === null || id < 1 || id > 1_000_000) return { kind: 'json', status: 404, body: { error: 'not found' } };
  if (match[2] === undefined) return { kind: 'json', body: defaultRecord(id) };
  if (match[3] === undefined) return { kind: 'json', body: { items: [defaultOrder(id, id * 100 + 1), defaultOrder(id, id * 100 + 2)] } };
  const order = defaultOrder(id, Number(match[3]));
  return order === null ? { kind: 'json', status: 404, body: { error: 'not found' } } : { kind: 'json', body: order };
}

/**
 * A real upstream customer service on 127.0.0.1 (`listenPort`, or any free one) that counts requests and can be told to fail in
 * any of the ways a real one does.
 */
export async function startTestUpstream(listenPort = 0): Promise<TestUpstream> {
  const behaviours = new Map<string, UpstreamBehaviour>();
  const paths: string[] = [];
  const headersSeen: IncomingMessage['headers'][] = [];
  const requests: { method: string; path: string; body: string }[] = [];
  const remotePorts: number[] = [];
  const sockets = new Set<Socket>();
  const sequenceAt = new WeakMap<UpstreamBehaviour, number>();
  let accepted = 0;
  let maxOpen = 0;
  let active = 0;

  const act = (res: ServerResponse, behaviour: UpstreamBehaviour): void => {
    switch (behaviour.kind) {
      case 'json': {
        const body = JSON.stringify(behaviour.body);
        res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...behaviour.headers });
        res.end(body);
        return;
      }
      case 'raw':
        res.writeHead(behaviour.status, { 'content-length': Buffer.byteLength(behaviour.body), ...behaviour.headers });
        res.end(behaviour.body);
        return;
      case 'hang':
        return;
      case 'reset':
        res.socket?.destroy();
        return;
      case 'cut': {
        const sent = behaviour.sent ?? '{"id":';
        res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sent) + 1000, ...behaviour.headers });
        res.write(sent, () => res.socket?.resetAndDestroy());
        return;
      }
      case 'chunked': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(16 * 1024, 0x20);
        let left = behaviour.bytes;
        const pump = (): void => {
          while (left > 0 && !res.destroyed) {
            const n = Math.min(left, chunk.length);
            left -= n;
            if (!res.write(chunk.subarray(0, n))) {
              res.once('drain', pump);
              return;
            }
          }
          if (!res.destroyed) res.end();
        };
        res.on('error', () => {});
        pump();
        return;
      }
      case 'drip': {
        res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', ...behaviour.headers });
        let sent = 0;
        const timer = setInterval(() => {
          if (res.destroyed || sent >= behaviour.chunks) {
            clearInterval(timer);
            if (!res.destroyed) res.end('{}');
            return;
          }
          sent++;
          res.write(' ');
        }, behaviour.intervalMs);
        return;
      }
      case 'delay':
        setTimeout(() => act(res, behaviour.then), behaviour.ms);
        return;
      case 'wait':
        // A request the gateway gave up on meanwhile gets no answer.
        behaviour.until
          .finally(() => {
            if (!res.destroyed) act(res, behaviour.then);
          })
          .catch(() => {});
        return;
      case 'sequence': {
        const n = sequenceAt.get(behaviour) ?? 0;
        sequenceAt.set(behaviour, n + 1);
        act(res, behaviour.steps[Math.min(n, behaviour.steps.length - 1)] as UpstreamBehaviour);
        return;
      }
    }
  };

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const method = req.method ?? 'GET';
    paths.push(path);
    headersSeen.push(req.headers);
    remotePorts.push(req.socket.remotePort ?? 0);
    active++;
    res.on('close', () => active--);
    // The body is read whole before the answer, so a test sees exactly what the gateway sent.
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method, path, body: Buffer.concat(chunks).toString('utf8') });
      const behaviour = behaviours.get(`${method} ${path}`) ?? behaviours.get(path) ?? behaviours.get('*');
      act(res, behaviour ?? defaultAnswer(path));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    accepted++;
    maxOpen = Math.max(maxOpen, sockets.size);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: (path) => (path === undefined ? paths.length : paths.filter((p) => p === path).length),
    paths,
    headersSeen,
    requests,
    remotePorts,
    connections: () => accepted,
    maxOpenConnections: () => maxOpen,
    active: () => active,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    reset: () => {
      behaviours.clear();
      paths.length = 0;
      headersSeen.length = 0;
      requests.length = 0;
      remotePorts.length = 0;
      accepted = 0;
      maxOpen = sockets.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
