import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { assertProblem, rawAnswer } from '../helpers/hostile.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

/** A product catalogue on its own service, declared only here: nothing in src/ names it. */
const CATALOGUE_KEY = 'catalogue-key-from-the-environment';

function product(shop: string, sku: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { sku, shop, title: `Item ${sku}`, price: 25.5, categoryId: 7, colour: 'red', warehouse: 'internal', ...extra };
}

function resources(catalogueUrl: string): unknown {
  return {
    upstreams: {
      catalogue: {
        url: catalogueUrl,
        timeoutMs: 1000,
        headers: { 'X-Api-Key': { env: 'HG_TEST_CATALOGUE_KEY' }, 'X-Static': 'fixed' },
        forwardClaims: { 'X-Subject': 'sub', 'X-Shop': 'shop' },
      },
    },
    resources: {
      products: {
        path: '/api/shops/{shop}/products/{sku}',
        params: { shop: 'string', sku: 'string' },
        upstream: '/v2/shops/{shop}/products/{sku}',
        service: 'catalogue',
        record: '/data',
        fields: ['sku', 'title', 'price'],
        fieldTypes: { title: 'string', price: 'number' },
        exposeFields: ['colour'],
        links: { category: '/api/categories/{categoryId}', shop: '/api/shops/{shop}/products' },
        linkFields: ['categoryId'],
        rel: 'product',
        collection: { path: '/api/shops/{shop}/products', upstream: '/v2/shops/{shop}/products', items: '/data', total: '/meta/total' },
        scope: 'catalogue:read',
        owner: { claim: 'shop', param: 'shop' },
        maxAgeSeconds: 30,
      },
      categories: {
        path: '/api/categories/{id}',
        params: { id: 'integer' },
        upstream: '/categories/{id}',
        service: 'catalogue',
        fields: ['id', 'name'],
        rel: 'category',
        scope: 'catalogue:read',
        collection: { path: '/api/categories', upstream: '/categories', paged: false },
      },
    },
  };
}

describe('a resource declared only in config', () => {
  let fx: Fixture;
  let catalogue: TestUpstream;
  let token: string;
  const read = (path: string, t = token, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...bearer(t), ...headers });

  before(async () => {
    process.env['HG_TEST_CATALOGUE_KEY'] = CATALOGUE_KEY;
    catalogue = await startTestUpstream();
    fx = await startFixture(resources(catalogue.url));
    token = await fx.token({ claims: { sub: 'shopper-1', shop: 'acme', scope: 'customers:read catalogue:read' } });
  });
  beforeEach(() => {
    catalogue.reset();
    catalogue.on('/v2/shops/acme/products/sku-1', { kind: 'json', body: { data: product('acme', 'sku-1') } });
    catalogue.on('/v2/shops/acme/products/SKU-1', { kind: 'json', body: { data: product('acme', 'SKU-1', { title: 'Upper' }) } });
    catalogue.on('/v2/shops/acme/products?offset=0&limit=20', {
      kind: 'json',
      body: { data: [product('acme', 'a.1'), product('acme', 'b_2', { categoryId: 'not/a segment' })], meta: { total: 2 } },
    });
    catalogue.on('/categories/7', { kind: 'json', body: { id: 7, name: 'Kitchen' } });
    catalogue.on('/categories', {
      kind: 'json',
      body: {
        items: [
          { id: 7, name: 'Kitchen' },
          { id: 8, name: 'Garden' },
        ],
      },
    });
  });
  after(async () => {
    await fx.close();
    await catalogue.close();
    delete process.env['HG_TEST_CATALOGUE_KEY'];
  });

  test('an item is read from its own service, unwrapped from its envelope, with the declared fields and links', async () => {
    const res = await read('/api/shops/acme/products/sku-1');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'max-age=30', "the resource's own maxAgeSeconds");
    assert.equal(
      res.text,
      JSON.stringify({
        sku: 'sku-1',
        title: 'Item sku-1',
        price: 25.5,
        colour: 'red',
        links: { self: '/api/shops/acme/products/sku-1', category: '/api/categories/7', shop: '/api/shops/acme/products' },
      }),
    );
    assert.deepEqual(catalogue.paths, ['/v2/shops/acme/products/sku-1']);
    assert.equal(fx.upstream.hits(), 0, 'the default service was not asked');
  });

  test('the service gets its fixed headers (one from the environment) and the forwarded claims, never the client token', async () => {
    catalogue.on('/v2/shops/acme/products/sku-h', { kind: 'json', body: { data: product('acme', 'sku-h') } });
    assert.equal((await read('/api/shops/acme/products/sku-h')).status, 200);
    const seen = catalogue.headersSeen[0] ?? {};
    assert.equal(seen['x-api-key'], CATALOGUE_KEY);
    assert.equal(seen['x-static'], 'fixed');
    assert.equal(seen['x-subject'], 'shopper-1');
    assert.equal(seen['x-shop'], 'acme');
    assert.equal(seen['authorization'], undefined);
    assert.match(String(seen['x-request-id']), /\S/);
  });

  test('string ids are compared exactly: case matters, and a percent-encoded or overlong segment is a 404 that never reaches the service', async () => {
    assert.equal(((await read('/api/shops/acme/products/SKU-1')).json() as { title: string }).title, 'Upper');
    for (const path of [
      '/api/shops/acme/products/sku%2D1',
      `/api/shops/acme/products/${'a'.repeat(65)}`,
      '/api/shops/acme/products/sku!1',
      '/api/shops/ac%6De/products/sku-1',
      '/api/shops/acme/product%73/sku-1',
    ]) {
      assertProblem(await read(path), { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
    }
    assert.deepEqual(catalogue.paths, ['/v2/shops/acme/products/SKU-1']);
  });

  test('"." and ".." are no string id: a 404 that never reaches the service, whose path a normaliser would rewrite', async () => {
    // Sent raw: an HTTP client library would remove the dot-segments before sending.
    const anyShop = await fx.token({ claims: { sub: 'ops', scope: 'customers:read catalogue:read customers:read:any' } });
    for (const path of [
      '/api/shops/../products/sku-1',
      '/api/shops/acme/products/..',
      '/api/shops/acme/products/.',
      '/api/shops/./products',
      '/api/shops/../products',
    ]) {
      const answer = await rawAnswer(fx.gw.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${anyShop}\r\nConnection: close\r\n\r\n`);
      assertProblem(answer, { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
    }
    assert.deepEqual(catalogue.paths, []);
  });

  test("a record the service does not have is the resource's own 404 problem", async () => {
    const res = await read('/api/shops/acme/products/nope');
    assertProblem(res, { status: 404, code: 'HG_ERR_PRODUCT_NOT_FOUND' });
    assert.equal(problemOf(res).detail, 'No product exists with this sku.');
  });

  test('records that break the declaration are 502s: no envelope, a missing field, a wrong type, another id', async () => {
    const cases: [string, unknown][] = [
      ['bad-1', product('acme', 'bad-1')],
      ['bad-2', { data: product('acme', 'bad-2', { title: undefined }) }],
      ['bad-3', { data: product('acme', 'bad-3', { price: '25' }) }],
      ['bad-4', { data: product('acme', 'other') }],
    ];
    for (const [sku, body] of cases) {
      catalogue.on(`/v2/shops/acme/products/${sku}`, { kind: 'json', body });
      assertProblem(await read(`/api/shops/acme/products/${sku}`), { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    }
  });

  test('the collection unwraps its items and total, pages with links, and fills the item cache', async () => {
    const res = await read('/api/shops/acme/products');
    assert.equal(res.status, 200);
    const body = res.json() as { items: { links: Record<string, string> }[]; total: number; links: Record<string, string> };
    assert.equal(body.total, 2);
    assert.deepEqual(body.links, {
      self: '/api/shops/acme/products?offset=0&limit=20',
      first: '/api/shops/acme/products?offset=0&limit=20',
      last: '/api/shops/acme/products?offset=0&limit=20',
    });
    assert.deepEqual(
      body.items.map((i) => i.links),
      [
        { self: '/api/shops/acme/products/a.1', category: '/api/categories/7', shop: '/api/shops/acme/products' },
        // A link whose record value does not fit a path segment is left out, not an error.
        { self: '/api/shops/acme/products/b_2', shop: '/api/shops/acme/products' },
      ],
    );
    assert.equal((await read('/api/shops/acme/products/a.1')).status, 200);
    assert.deepEqual(catalogue.paths, ['/v2/shops/acme/products?offset=0&limit=20'], 'the member was a cache hit');
  });

  test('the owner rule: a token reads only its own shop unless it holds auth.readAnyScope', async () => {
    catalogue.on('/v2/shops/acme/products/sku-o', { kind: 'json', body: { data: product('acme', 'sku-o') } });
    const other = await fx.token({ claims: { shop: 'globex', scope: 'catalogue:read' } });
    for (const path of ['/api/shops/acme/products/sku-o', '/api/shops/acme/products']) {
      const refused = await read(path, other);
      assertProblem(refused, { status: 403, code: 'HG_ERR_NOT_OWNER' });
      assert.equal(problemOf(refused).detail, 'This token may read only its own shop.', 'the owner is named by its parameter, not as a customer');
    }
    assert.equal(catalogue.hits(), 0, 'refused before the cache or the service was asked');
    const any = await fx.token({ claims: { shop: 'globex', scope: 'catalogue:read customers:read:any' } });
    assert.equal((await read('/api/shops/acme/products/sku-o', any)).status, 200);
    assert.equal(catalogue.hits('/v2/shops/acme/products/sku-o'), 1);
  });

  test('its own scope: a token with only auth.requiredScope is refused', async () => {
    const reader = await fx.token({ claims: { shop: 'acme', scope: 'customers:read' } });
    const res = await read('/api/shops/acme/products/sku-1', reader);
    assertProblem(res, { status: 403, code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE' });
    assert.match(String(res.headers['www-authenticate']), /scope="catalogue:read"/);
  });

  for (const [format, accept] of [
    ['JSON', 'application/json'],
    ['HAL', 'application/hal+json'],
  ] as const) {
    test(`a client walks from /api to a product and its category by following links only (${format})`, async () => {
      const hal = format === 'HAL';
      const linksOf = (body: Record<string, unknown>): Record<string, string | { href: string; templated?: boolean }> =>
        (hal ? body['_links'] : body['links']) as Record<string, string | { href: string }>;
      const href = (link: string | { href: string } | undefined): string => (typeof link === 'string' ? link : (link?.href ?? ''));
      const follow = async (path: string): Promise<Record<string, unknown>> => {
        const res = await read(path, token, { accept });
        assert.equal(res.status, 200, path);
        assert.equal(res.headers['content-type'], accept);
        return res.json() as Record<string, unknown>;
      };
      const root = linksOf(await follow('/api'));
      assert.deepEqual(root['product'], { href: '/api/shops/{shop}/products/{sku}', templated: true });
      assert.equal(href(root['categories']), '/api/categories');
      // RFC 6570 level 1: the template's variables are filled in by the client.
      const productPath = href(root['product']).replace('{shop}', 'acme').replace('{sku}', 'sku-1');
      const item = await follow(productPath);
      assert.equal(item['title'], 'Item sku-1');
      const category = await follow(href(linksOf(item)['category']));
      assert.equal(category['name'], 'Kitchen');
      const categories = await follow(href(root['categories']));
      const members = hal ? ((categories['_embedded'] as Record<string, unknown[]>)['categories'] ?? []) : (categories['items'] as unknown[]);
      assert.deepEqual(
        members.map((m) => href(linksOf(m as Record<string, unknown>)['self'])),
        ['/api/categories/7', '/api/categories/8'],
      );
    });
  }

  test('the OpenAPI document describes it: paths, typed parameters, fields, scopes and its 404, and a real validator accepts it', async () => {
    const doc = (await read('/api/openapi.json')).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; schema: Record<string, unknown> }[];
            security: Record<string, string[]>[];
            responses: Record<string, { description: string }>;
          }
        >
      >;
      components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> };
    };
    const op = doc.paths['/api/shops/{shop}/products/{sku}']?.['get'];
    assert.ok(op);
    // Then the conditional headers every read takes.
    assert.deepEqual(
      op.parameters?.map((p) => [p.name, p.schema['type']]),
      [
        ['shop', 'string'],
        ['sku', 'string'],
        ['If-None-Match', 'string'],
        ['If-Match', 'string'],
      ],
    );
    assert.deepEqual(op.security, [{ bearerAuth: ['catalogue:read'] }]);
    assert.match(op.responses['404']?.description ?? '', /urn:hypergate:problem:product-not-found/);
    assert.ok(doc.paths['/api/shops/{shop}/products']?.['get']);
    assert.deepEqual(doc.components.schemas['Product']?.required, ['sku', 'title', 'price', 'links']);
    assert.deepEqual(doc.components.schemas['Product']?.properties?.['price'], { type: 'number' });
    assert.ok(doc.components.schemas['ProductPageHal']);
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });

  test('the customers of the shipped config answer beside it, unchanged', async () => {
    const res = await read('/api/customers/42');
    assert.equal(res.status, 200);
    assert.equal(
      res.text,
      JSON.stringify({ id: 42, name: 'Customer 42', status: 'active', links: { self: '/api/customers/42', orders: '/api/customers/42/orders' } }),
    );
  });
});
