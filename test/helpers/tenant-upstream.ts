import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real upstream whose answers depend on who asks: `/customers/<id>` answers the record of the
 * tenant named in `X-Tenant` (forwarded from the token's `tenant` claim), in the language of
 * `Accept-Language`, storable for 60 s; `/customers?...` a page of two of them. Customers from 900 on exist
 * for tenant a only, and no customer has orders (404). `hold()` keeps every answer back until its release, so
 * reads of different tenants can overlap one load.
 */
export interface TenantUpstream {
  readonly url: string;
  /** The headers of every request received, in order. */
  readonly seen: IncomingHttpHeaders[];
  /** The target of each request, in order. */
  readonly urls: string[];
  hold(): () => void;
  close(): Promise<void>;
}

export async function startTenantUpstream(): Promise<TenantUpstream> {
  const seen: IncomingHttpHeaders[] = [];
  const urls: string[] = [];
  let held: Promise<void> | null = null;
  const server = createServer((req, res) => {
    seen.push(req.headers);
    urls.push(req.url ?? '');
    const match = /^\/customers\/(\d+)(?:\?|$)/.exec(req.url ?? '');
    const list = (req.url ?? '').startsWith('/customers?');
    const answer = (): void => {
      const tenant = String(req.headers['x-tenant'] ?? 'nobody');
      if (list) {
        const items = [1, 2].map((id) => ({ id, name: `${tenant} list`, status: 'active' }));
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify({ items, total: 2 }));
        return;
      }
      // Customers from 900 on exist for tenant a only; no customer has orders.
      if (match === null || (Number(match[1]) >= 900 && tenant !== 'a')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      const language = String(req.headers['accept-language'] ?? 'en');
      const body = JSON.stringify({ id: Number(match[1]), name: `${tenant} ${language}`, status: 'active' });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
    };
    if (held === null) answer();
    else void held.then(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    urls,
    hold: () => {
      let release = (): void => {};
      held = new Promise((resolve) => {
        release = () => {
          held = null;
          resolve();
        };
      });
      return release;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
