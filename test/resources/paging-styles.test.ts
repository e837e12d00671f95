import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, type HttpAnswer } from '../helpers/gateway.ts';
import { startGithubLike, startJsonApiLike, startSpringLike, startStripeLike, type ShapedApi } from '../helpers/shaped-apis.ts';

/** Four upstreams shaped like public APIs, each declared with its own paging style and query. */
const ISSUES = Array.from({ length: 23 }, (_, i) => ({
  number: i + 1,
  title: `Issue ${i + 1}`,
  state: i % 3 === 0 ? 'closed' : 'open',
  labels: i % 2 === 0 ? ['bug'] : ['docs'],
}));
const CUSTOMERS = Array.from({ length: 17 }, (_, i) => ({ id: `cus_${String(i + 1).padStart(4, '0')}`, email: `c${i + 1}@example.com`, created: 1000 + i }));
const PRODUCTS = Array.from({ length: 31 }, (_, i) => ({
  id: i + 1,
  name: `${['Lamp', 'Desk', 'Chair'][i % 3]} ${i + 1}`,
  price: 10 + ((i * 7) % 50),
  inStock: i % 4 !== 0,
}));
const ARTICLES = Array.from({ length: 12 }, (_, i) => ({ id: String(i + 1), title: `Article ${i + 1}`, author: i % 2 === 0 ? 'ada' : 'tim' }));

function config(github: string, stripe: string, spring: string, jsonapi: string): unknown {
  return {
    upstreams: { github: { url: github }, stripe: { url: stripe }, spring: { url: spring }, jsonapi: { url: jsonapi } },
    resources: {
      issues: {
        path: '/api/issues/{number}',
        params: { number: 'integer' },
        upstream: '/repos/acme/widgets/issues/{number}',
        service: 'github',
        fields: ['number', 'title', 'state'],
        collection: {
          path: '/api/issues',
          upstream: '/repos/acme/widgets/issues?sort=created',
          items: '',
          paging: { style: 'link', defaultLimit: 5, maxLimit: 50 },
          query: {
            state: { type: 'enum', values: ['open', 'closed', 'all'], default: 'open' },
            labels: { type: 'string', list: true, maxItems: 3, pattern: '[a-z-]+' },
          },
        },
      },
      payers: {
        path: '/api/payers/{id}',
        params: { id: 'string' },
        upstream: '/v1/customers/{id}',
        service: 'stripe',
        fields: ['id', 'email'],
        collection: {
          path: '/api/payers',
          upstream: '/v1/customers',
          items: '/data',
          paging: { style: 'cursor', cursorParam: 'starting_after', sizeParam: 'limit', hasMore: '/has_more', lastKey: 'id', defaultLimit: 4 },
          query: { createdSince: { type: 'integer', min: 0, max: 4_000_000_000, upstream: 'created[gte]' } },
        },
      },
      products: {
        path: '/api/products/{id}',
        params: { id: 'integer' },
        upstream: '/api/v1/products/{id}',
        service: 'spring',
        fields: ['id', 'name', 'price'],
        exposeFields: ['currency'],
        query: { currency: { type: 'enum', values: ['EUR', 'USD'], default: 'EUR' } },
        collection: {
          path: '/api/products',
          upstream: '/api/v1/products',
          items: '/content',
          total: '/totalElements',
          cacheItems: false,
          paging: { style: 'page', pageParam: 'page', sizeParam: 'size', firstPage: 0, defaultLimit: 10 },
          query: {
            sort: { type: 'enum', values: ['id', 'name', 'price'], default: 'id' },
            q: { type: 'string', maxLength: 20, pattern: '[A-Za-z0-9 ]+' },
            inStock: { type: 'boolean', upstream: 'in_stock' },
          },
        },
      },
      articles: {
        path: '/api/articles/{id}',
        params: { id: 'integer' },
        upstream: '/articles/{id}',
        service: 'jsonapi',
        record: '/data',
        fields: ['id', 'type'],
        exposeFields: ['attributes'],
        collection: {
          path: '/api/articles',
          upstream: '/articles',
          items: '/data',
          total: { header: 'X-Total-Count' },
          paging: { style: 'offset', offsetParam: 'page[offset]', limitParam: 'page[limit]', defaultLimit: 5 },
          query: { author: { type: 'string', required: true, maxLength: 32, upstream: 'filter[author]' } },
        },
      },
    },
  };
}

describe('collections of upstreams shaped like real APIs, paged their way', () => {
  let fx: Fixture;
  let token: string;
  const apis: Record<'github' | 'stripe' | 'spring' | 'jsonapi', ShapedApi> = {} as never;
  const read = (path: string): Promise<HttpAnswer> => get(`${fx.gw.url}${path}`, bearer(token));

  /** Follows next from `path` to the end; every page is a 200 and no page carries an upstream address. */
  async function follow(path: string): Promise<{ ids: unknown[]; pages: Record<string, unknown>[] }> {
    const ids: unknown[] = [];
    const pages: Record<string, unknown>[] = [];
    let next: string | undefined = path;
    for (let guard = 0; next !== undefined && guard < 100; guard++) {
      const answer = await read(next);
      assert.equal(answer.status, 200, `${next}: ${answer.text}`);
      for (const api of Object.values(apis)) assert.ok(!answer.text.includes(api.url.replace('http://', '')), `${next} shows no upstream address`);
      const page = answer.json() as { items: { id?: unknown; number?: unknown }[]; links: Record<string, string> };
      pages.push(page);
      ids.push(...page.items.map((item) => item.id ?? item.number));
      next = page.links['next'];
    }
    return { ids, pages };
  }

  before(async () => {
    apis.github = await startGithubLike(ISSUES);
    apis.stripe = await startStripeLike(CUSTOMERS);
    apis.spring = await startSpringLike(PRODUCTS);
    apis.jsonapi = await startJsonApiLike(ARTICLES);
    fx = await startFixture(config(apis.github.url, apis.stripe.url, apis.spring.url, apis.jsonapi.url));
    token = await fx.token();
  });
  beforeEach(async () => {
    await fx.gw.gateway.purge(null);
    for (const api of Object.values(apis)) api.seen.length = 0;
  });
  after(async () => {
    await fx.close();
    for (const api of Object.values(apis)) await api.close();
  });

  test('a Link-header API (GitHub-style): next links lead through every open issue once, with the fixed and declared query forwarded', async () => {
    const { ids, pages } = await follow('/api/issues');
    const open = ISSUES.filter((i) => i.state === 'open').map((i) => i.number);
    assert.deepEqual(ids, open);
    assert.equal(pages.length, Math.ceil(open.length / 5));
    const first = pages[0] as { links: Record<string, string> };
    assert.equal(first.links['self'], '/api/issues?state=open&limit=5');
    assert.equal(first.links['first'], '/api/issues?state=open&limit=5');
    assert.equal(first.links['last'], undefined, 'no total: no last');
    assert.match(first.links['next'] ?? '', /^\/api\/issues\?state=open&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}&limit=5$/);
    const second = pages[1] as { links: Record<string, string> };
    assert.ok(second.links['prev'] !== undefined, "the upstream's prev becomes a gateway link");
    assert.equal(apis.github.seen[0], '/repos/acme/widgets/issues?sort=created&state=open&per_page=5');
    assert.equal(apis.github.seen[1], '/repos/acme/widgets/issues?sort=created&state=open&per_page=5&page=2');
  });

  test('a list filter travels as one comma-separated parameter, and every page keeps it', async () => {
    const { ids } = await follow('/api/issues?labels=bug&state=all');
    assert.deepEqual(
      ids,
      ISSUES.filter((i) => i.labels.includes('bug')).map((i) => i.number),
    );
    assert.equal(apis.github.seen[0], '/repos/acme/widgets/issues?sort=created&labels=bug&state=all&per_page=5');
  });

  test('a cursor API (Stripe-style data/has_more/starting_after): next links lead through every customer once', async () => {
    const { ids, pages } = await follow('/api/payers');
    assert.deepEqual(
      ids,
      CUSTOMERS.map((c) => c.id),
    );
    assert.equal(pages.length, Math.ceil(CUSTOMERS.length / 4));
    const first = pages[0] as { links: Record<string, string> };
    assert.equal(first.links['prev'], undefined);
    assert.equal(first.links['last'], undefined);
    assert.equal(apis.stripe.seen[0], '/v1/customers?limit=4');
    assert.equal(apis.stripe.seen[1], '/v1/customers?starting_after=cus_0004&limit=4');
  });

  test("a filter on a cursor API is forwarded under the upstream's name on every page", async () => {
    const { ids } = await follow('/api/payers?createdSince=1010&limit=3');
    assert.deepEqual(
      ids,
      CUSTOMERS.filter((c) => c.created >= 1010).map((c) => c.id),
    );
    assert.equal(apis.stripe.seen[0], '/v1/customers?created%5Bgte%5D=1010&limit=3');
  });

  test('a page/size API with an envelope (Spring-style content/totalElements): every product once, with first, prev, next and last', async () => {
    const { ids, pages } = await follow('/api/products?sort=price&limit=7');
    const byPrice = [...PRODUCTS].sort((a, b) => a.price - b.price || a.id - b.id).map((p) => p.id);
    assert.deepEqual(ids, byPrice);
    const second = pages[1] as { total: number; links: Record<string, string> };
    assert.equal(second.total, PRODUCTS.length);
    assert.deepEqual(second.links, {
      self: '/api/products?sort=price&offset=7&limit=7',
      first: '/api/products?sort=price&offset=0&limit=7',
      prev: '/api/products?sort=price&offset=0&limit=7',
      next: '/api/products?sort=price&offset=14&limit=7',
      last: '/api/products?sort=price&offset=28&limit=7',
    });
    assert.equal(apis.spring.seen[1], '/api/v1/products?sort=price&page=1&size=7');
  });

  test("a JSON:API-style document (data/attributes/links/meta): every article once, the total from X-Total-Count, the upstream's own links left inside", async () => {
    const { ids, pages } = await follow('/api/articles?author=ada&limit=2');
    assert.deepEqual(
      ids,
      ARTICLES.filter((a) => a.author === 'ada').map((a) => Number(a.id)),
    );
    const first = pages[0] as { total: number; items: { attributes: unknown; links: Record<string, string> }[]; links: Record<string, string> };
    assert.equal(first.total, 6);
    assert.deepEqual(first.items[0]?.attributes, { title: 'Article 1', author: 'ada' });
    assert.deepEqual(first.items[0]?.links, { self: '/api/articles/1' });
    assert.equal(first.links['last'], '/api/articles?author=ada&offset=4&limit=2');
    assert.equal(apis.jsonapi.seen[0], '/articles?filter%5Bauthor%5D=ada&page%5Boffset%5D=0&page%5Blimit%5D=2');
  });

  test('two spellings of one query are one cache entry, and self names the canonical one', async () => {
    const a = await read('/api/products?sort=name&q=Lamp');
    const b = await read('/api/products?q=Lamp&sort=name');
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(apis.spring.seen.length, 1, 'one upstream request');
    assert.equal(b.headers['cache-status'] !== undefined && String(b.headers['cache-status']).includes('hit'), true);
    assert.equal((b.json() as { links: { self: string } }).links.self, '/api/products?q=Lamp&sort=name&offset=0&limit=10');
    assert.equal(a.text, b.text);
  });

  test('a default is part of the canonical spelling: no parameter and the default are one entry', async () => {
    const a = await read('/api/products');
    const b = await read('/api/products?sort=id&offset=0&limit=10');
    assert.equal((a.json() as { links: { self: string } }).links.self, '/api/products?sort=id&offset=0&limit=10');
    assert.equal(a.text, b.text);
    assert.equal(apis.spring.seen.length, 1);
  });

  for (const [query, detail] of [
    ['?sort=colour', 'Query parameter "sort" must be one of id, name, price.'],
    ['?q=a%3Bb', 'Query parameter "q" must be text of 1 to 20 characters matching [A-Za-z0-9 ]+.'],
    [`?q=${'a'.repeat(21)}`, 'Query parameter "q" must be text of 1 to 20 characters matching [A-Za-z0-9 ]+.'],
    ['?q=%E0%A4%A', 'Query parameter "q" is not valid percent-encoded UTF-8.'],
    ['?inStock=yes', 'Query parameter "inStock" must be true or false.'],
    ['?q=a&q=b', 'Query parameter "q" is given more than once.'],
    ['?colour=red', 'Query parameter "colour" is not known here; this collection takes inStock, q, sort, offset and limit.'],
    ['?limit=101', 'Query parameter "limit" must be an integer from 1 to 100.'],
    ['?offset=5', 'Query parameter "offset" must be a multiple of limit (10) here.'],
    ['?cursor=abc', 'Query parameter "cursor" is not known here; this collection takes inStock, q, sort, offset and limit.'],
  ] as const) {
    test(`${query} is a 400 naming the parameter, and nothing is forwarded`, async () => {
      const answer = await read(`/api/products${query}`);
      assert.equal(answer.status, 400);
      assert.equal(problemOf(answer).detail, detail);
      assert.equal(problemOf(answer).code, 'HG_ERR_INVALID_QUERY');
      assert.equal(apis.spring.seen.length, 0);
    });
  }

  test('integer bounds, required parameters and list sizes are checked before anything is forwarded', async () => {
    const cases: [string, string][] = [
      ['/api/payers?createdSince=-1', 'Query parameter "createdSince" must be an integer from 0 to 4000000000.'],
      ['/api/payers?createdSince=01', 'Query parameter "createdSince" must be an integer from 0 to 4000000000.'],
      ['/api/articles', 'Query parameter "author" is required.'],
      [
        '/api/issues?labels=a,b,c,d',
        'Query parameter "labels" must be a comma-separated list of 1 to 3 values, each text of 1 to 256 characters matching [a-z-]+.',
      ],
      ['/api/issues?labels=a&labels=b', 'Query parameter "labels" is given more than once; a list is one parameter, its values comma-separated.'],
    ];
    for (const [path, detail] of cases) {
      const answer = await read(path);
      assert.equal(answer.status, 400, path);
      assert.equal(problemOf(answer).detail, detail, path);
    }
    for (const api of Object.values(apis)) assert.deepEqual(api.seen, []);
  });

  test('a cursor changed in any way, or moved to another query, is a 400 before anything is forwarded', async () => {
    const first = (await read('/api/payers')).json() as { links: { next: string } };
    const next = first.links.next;
    const token = /cursor=([^&]+)/.exec(next)?.[1] ?? '';
    const seen = apis.stripe.seen.length;
    const forged = Buffer.from('cus_0010').toString('base64url') + token.slice(token.indexOf('.'));
    const tampered = [
      next.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`),
      next.replace(token, forged),
      next.replace('limit=4', 'limit=5'),
      `${next}&createdSince=0`.replace('&limit=4&createdSince=0', '&createdSince=0&limit=4'),
      next.replace('/api/payers', '/api/issues').replace(/limit=4/, 'limit=4'),
    ];
    for (const path of tampered) {
      const answer = await read(path);
      assert.equal(answer.status, 400, path);
      assert.equal(problemOf(answer).code, 'HG_ERR_INVALID_QUERY', path);
      assert.match(problemOf(answer).detail, /"cursor"/);
    }
    assert.equal(apis.stripe.seen.length, seen, 'nothing forwarded');
    assert.deepEqual(apis.github.seen, []);
    assert.equal((await read(next)).status, 200, 'the cursor as given still works');
  });

  test('an item that declares a query is cached under its canonical spelling and asks the upstream with it', async () => {
    const plain = await read('/api/products/3');
    const usd = await read('/api/products/3?currency=USD');
    assert.deepEqual(plain.json(), { id: 3, name: 'Chair 3', price: 24, currency: 'EUR', links: { self: '/api/products/3?currency=EUR' } });
    assert.equal((usd.json() as { currency: string }).currency, 'USD');
    assert.deepEqual(apis.spring.seen, ['/api/v1/products/3?currency=EUR', '/api/v1/products/3?currency=USD']);
    assert.equal((await read('/api/products/3?currency=GBP')).status, 400);
    assert.equal((await read('/api/products/3?colour=red')).status, 400);
  });
});
