import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Real upstreams on 127.0.0.1 port 0 shaped like public APIs, each paging its own way over a fixed
 * data set: a test can follow the gateway's links to the end and count what it got. Each records
 * the request targets it was sent.
 */
export interface ShapedApi {
  readonly url: string;
  /** Every request target received, in order. */
  readonly seen: string[];
  close(): Promise<void>;
}

type Handler = (url: URL, res: ServerResponse, origin: string) => void;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function serve(handler: Handler): Promise<ShapedApi> {
  const seen: string[] = [];
  let origin = '';
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push(req.url ?? '');
    handler(new URL(req.url ?? '/', origin), res, origin);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const count = (text: string | null, fallback: number): number => (text === null ? fallback : Number(text));

/** GitHub-style issues: a bare array, `per_page` and `page` (1-based), the next page in an absolute `Link` URL; `state` and `labels` filters. */
export function startGithubLike(issues: readonly { number: number; title: string; state: string; labels: string[] }[]): Promise<ShapedApi> {
  return serve((url, res, origin) => {
    const one = /^\/repos\/acme\/widgets\/issues\/(\d+)$/.exec(url.pathname);
    if (one !== null) {
      const issue = issues.find((i) => i.number === Number(one[1]));
      return issue === undefined ? json(res, 404, { message: 'Not Found' }) : json(res, 200, issue);
    }
    if (url.pathname !== '/repos/acme/widgets/issues') return json(res, 404, { message: 'Not Found' });
    const perPage = count(url.searchParams.get('per_page'), 30);
    const page = count(url.searchParams.get('page'), 1);
    const state = url.searchParams.get('state') ?? 'open';
    const labels = url.searchParams.get('labels')?.split(',') ?? [];
    const matching = issues.filter((i) => (state === 'all' || i.state === state) && labels.every((l) => i.labels.includes(l)));
    const pages = Math.max(1, Math.ceil(matching.length / perPage));
    const at = (p: number): string => {
      const next = new URL(url.href);
      next.searchParams.set('page', String(p));
      return `${origin}${next.pathname}${next.search}`;
    };
    const links: string[] = [];
    if (page < pages) links.push(`<${at(page + 1)}>; rel="next"`, `<${at(pages)}>; rel="last"`);
    if (page > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(page - 1)}>; rel="prev"`);
    json(res, 200, matching.slice((page - 1) * perPage, page * perPage), links.length === 0 ? {} : { link: links.join(', ') });
  });
}

/** Stripe-style customers: `{object: "list", data, has_more, url}`, `limit` and `starting_after` (an id); a `created[gte]` filter. */
export function startStripeLike(customers: readonly { id: string; email: string; created: number }[]): Promise<ShapedApi> {
  return serve((url, res) => {
    const one = /^\/v1\/customers\/(cus_[A-Za-z0-9]+)$/.exec(url.pathname);
    if (one !== null) {
      const customer = customers.find((c) => c.id === one[1]);
      return customer === undefined ? json(res, 404, { error: { type: 'invalid_request_error' } }) : json(res, 200, { object: 'customer', ...customer });
    }
    if (url.pathname !== '/v1/customers') return json(res, 404, { error: { type: 'invalid_request_error' } });
    const limit = count(url.searchParams.get('limit'), 10);
    const after = url.searchParams.get('starting_after');
    const gte = count(url.searchParams.get('created[gte]'), 0);
    const matching = customers.filter((c) => c.created >= gte);
    const start = after === null ? 0 : matching.findIndex((c) => c.id === after) + 1;
    if (after !== null && start === 0) return json(res, 400, { error: { type: 'invalid_request_error', message: 'No such customer' } });
    const data = matching.slice(start, start + limit).map((c) => ({ object: 'customer', ...c }));
    json(res, 200, { object: 'list', data, has_more: start + limit < matching.length, url: '/v1/customers' });
  });
}

/** Spring-style products: `{content, totalElements, totalPages, number, size}`, `page` (0-based) and `size`; `sort`, `q` and `in_stock` filters. */
export function startSpringLike(products: readonly { id: number; name: string; price: number; inStock: boolean }[]): Promise<ShapedApi> {
  return serve((url, res) => {
    const one = /^\/api\/v1\/products\/(\d+)$/.exec(url.pathname);
    if (one !== null) {
      const product = products.find((p) => p.id === Number(one[1]));
      const currency = url.searchParams.get('currency') ?? 'EUR';
      return product === undefined ? json(res, 404, { status: 404 }) : json(res, 200, { ...product, currency });
    }
    if (url.pathname !== '/api/v1/products') return json(res, 404, { status: 404 });
    const size = count(url.searchParams.get('size'), 20);
    const page = count(url.searchParams.get('page'), 0);
    const q = url.searchParams.get('q');
    const inStock = url.searchParams.get('in_stock');
    const sort = url.searchParams.get('sort') ?? 'id';
    const matching = products
      .filter((p) => (q === null || p.name.includes(q)) && (inStock === null || String(p.inStock) === inStock))
      .sort((a, b) => (sort === 'price' ? a.price - b.price || a.id - b.id : sort === 'name' ? a.name.localeCompare(b.name) || a.id - b.id : a.id - b.id));
    json(res, 200, {
      content: matching.slice(page * size, (page + 1) * size),
      totalElements: matching.length,
      totalPages: Math.ceil(matching.length / size),
      number: page,
      size,
    });
  });
}

/** JSON:API-style articles: `{data: [{type, id, attributes, links}], links, meta}`, `page[offset]`, `page[limit]`, `filter[author]`; the count also in `X-Total-Count`. */
export function startJsonApiLike(articles: readonly { id: string; title: string; author: string }[]): Promise<ShapedApi> {
  return serve((url, res, origin) => {
    const resource = (a: { id: string; title: string; author: string }) => ({
      type: 'articles',
      id: a.id,
      attributes: { title: a.title, author: a.author },
      links: { self: `${origin}/articles/${a.id}` },
    });
    const one = /^\/articles\/(\d+)$/.exec(url.pathname);
    if (one !== null) {
      const article = articles.find((a) => a.id === one[1]);
      return article === undefined ? json(res, 404, { errors: [{ status: '404' }] }) : json(res, 200, { data: resource(article) });
    }
    if (url.pathname !== '/articles') return json(res, 404, { errors: [{ status: '404' }] });
    const offset = count(url.searchParams.get('page[offset]'), 0);
    const limit = count(url.searchParams.get('page[limit]'), 10);
    const author = url.searchParams.get('filter[author]');
    const matching = articles.filter((a) => author === null || a.author === author);
    const at = (o: number): string => `${origin}/articles?page[offset]=${o}&page[limit]=${limit}`;
    const links: Record<string, string> = { self: at(offset), first: at(0) };
    if (offset + limit < matching.length) links['next'] = at(offset + limit);
    json(
      res,
      200,
      { data: matching.slice(offset, offset + limit).map(resource), links, meta: { total: matching.length } },
      { 'x-total-count': String(matching.length) },
    );
  });
}

/** A JSON:API product: its attributes (nested as they come) and, when it has one, its brand's id (a relationship). */
export interface JsonApiProduct {
  readonly id: string;
  readonly attributes: Record<string, unknown>;
  readonly brand?: string;
}

/**
 * A JSON:API-style shop: products as `{data: {type, id, attributes, relationships, links}, meta}`,
 * a list with `page[offset]`, `page[limit]` and a `filter[brand]` filter, its total at `/meta/total`,
 * and brands as `{data: {type, id, attributes: {name}}}`.
 */
export function startJsonApiShop(products: readonly JsonApiProduct[]): Promise<ShapedApi> {
  return serve((url, res, origin) => {
    const document = (p: JsonApiProduct) => ({
      type: 'products',
      id: p.id,
      attributes: p.attributes,
      relationships: p.brand === undefined ? {} : { brand: { data: { type: 'brands', id: p.brand } } },
      links: { self: `${origin}/products/${p.id}` },
    });
    const one = /^\/products\/(\d+)$/.exec(url.pathname);
    if (one !== null) {
      const p = products.find((x) => x.id === one[1]);
      return p === undefined ? json(res, 404, { errors: [{ status: '404' }] }) : json(res, 200, { data: document(p), meta: { served: 'now' } });
    }
    const brand = /^\/brands\/([a-z]+)$/.exec(url.pathname);
    if (brand !== null) return json(res, 200, { data: { type: 'brands', id: brand[1], attributes: { name: 'Acme' } } });
    if (url.pathname !== '/products') return json(res, 404, { errors: [{ status: '404' }] });
    const filter = url.searchParams.get('filter[brand]');
    const offset = count(url.searchParams.get('page[offset]'), 0);
    const limit = count(url.searchParams.get('page[limit]'), 10);
    const matching = products.filter((p) => filter === null || p.brand === filter);
    json(res, 200, { data: matching.slice(offset, offset + limit).map(document), meta: { total: matching.length } });
  });
}
