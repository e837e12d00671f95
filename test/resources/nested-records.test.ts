import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import { startJsonApiShop, type JsonApiProduct, type ShapedApi } from '../helpers/shaped-apis.ts';

/** Products with nested attributes: one whose values all fit, one whose brand fits nothing, one without brand or maker, one without a title. */
const PRODUCTS: readonly JsonApiProduct[] = [
  {
    id: '1',
    attributes: { title: 'Lamp', price: { amount: 12.5, currency: 'EUR' }, maker: { id: 'acme', country: { code: 'SE' } }, tags: ['light', 'desk'] },
    brand: 'acme',
  },
  { id: '2', attributes: { title: 'Desk', price: { amount: 99, currency: 'EUR' }, maker: { country: { code: 'DE' } } }, brand: 'ACME!' },
  { id: '3', attributes: { title: 'Chair', price: { amount: 40, currency: 'EUR' } } },
  { id: '4', attributes: { title: 'Shade', price: { amount: 5, currency: 'EUR' }, maker: { id: 'acme' } }, brand: 'acme' },
  { id: '5', attributes: { price: { amount: 1, currency: 'EUR' } } },
];

function declaration(shop: string): unknown {
  return {
    upstreams: { shop: { url: shop } },
    resources: {
      products: {
        path: '/api/products/{id}',
        params: { id: 'integer' },
        upstream: '/products/{id}',
        service: 'shop',
        record: '/data',
        fields: ['id', { name: 'title', pointer: '/attributes/title' }, { name: 'price', pointer: '/attributes/price' }],
        fieldTypes: { title: 'string', price: 'object' },
        exposeFields: [
          { name: 'maker', pointer: '/attributes/maker' },
          { name: 'tags', pointer: '/attributes/tags' },
        ],
        linkFields: [{ name: 'brand', pointer: '/relationships/brand/data/id' }],
        links: { maker: '/api/brands/{maker.id}', brand: '/api/brands/{brand}', sameBrand: '/api/products{?brand}' },
        collection: {
          path: '/api/products',
          upstream: '/products',
          items: '/data',
          total: '/meta/total',
          paging: { style: 'offset', offsetParam: 'page[offset]', limitParam: 'page[limit]', defaultLimit: 10 },
          query: { brand: { type: 'string', pattern: '[a-z]+', maxLength: 20, upstream: 'filter[brand]' } },
        },
      },
      brands: {
        path: '/api/brands/{id}',
        params: { id: 'string' },
        upstream: '/brands/{id}',
        service: 'shop',
        record: '/data',
        fields: ['id', { name: 'name', pointer: '/attributes/name' }],
      },
    },
  };
}

describe('nested records: a JSON:API document exposed with pointers and renames', () => {
  let fx: Fixture;
  let shop: ShapedApi;
  let token: string;
  const read = (path: string, accept?: string): Promise<HttpAnswer> =>
    get(`${fx.gw.url}${path}`, { ...bearer(token), ...(accept === undefined ? {} : { accept }) });

  before(async () => {
    shop = await startJsonApiShop(PRODUCTS);
    fx = await startFixture(declaration(shop.url));
    token = await fx.token();
  });
  beforeEach(async () => {
    await fx.gw.gateway.purge(null);
  });
  after(async () => {
    await fx.close();
    await shop.close();
  });

  test('fields are taken from their pointers under their public names; nested objects and arrays pass as sent', async () => {
    const answer = await read('/api/products/1');
    assert.equal(answer.status, 200, answer.text);
    const body = answer.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['id', 'title', 'price', 'maker', 'tags', 'links']);
    assert.equal(body['id'], 1);
    assert.equal(body['title'], 'Lamp');
    assert.deepEqual(body['price'], { amount: 12.5, currency: 'EUR' });
    assert.deepEqual(body['maker'], { id: 'acme', country: { code: 'SE' } });
    assert.deepEqual(body['tags'], ['light', 'desk']);
    // Nothing else of the document passes: not its attributes, relationships, links or meta.
    for (const hidden of ['attributes', 'relationships', 'meta', 'type', 'brand']) assert.ok(!(hidden in body), `${hidden} is not exposed`);
    assert.ok(!answer.text.includes(shop.url.replace('http://', '')), 'no upstream address');
  });

  test('a link names a nested value with dots, and a {?brand} query expression carries a record value', async () => {
    const body = (await read('/api/products/1')).json() as { links: Record<string, string> };
    assert.deepEqual(body.links, {
      self: '/api/products/1',
      maker: '/api/brands/acme',
      brand: '/api/brands/acme',
      sameBrand: '/api/products?brand=acme',
    });
  });

  test('an undefined query variable is omitted; a value unfit for the path or the declared query parameter leaves the link out', async () => {
    // Product 2: brand "ACME!" fits neither the brands path nor the brand parameter's pattern; its maker has no id.
    const unfit = (await read('/api/products/2')).json() as { links: Record<string, string> };
    assert.deepEqual(unfit.links, { self: '/api/products/2' });
    // Product 3: no brand, no maker: the query expression expands to nothing (RFC 6570 section 2.3).
    const absent = (await read('/api/products/3')).json() as { links: Record<string, string>; maker?: unknown };
    assert.deepEqual(absent.links, { self: '/api/products/3', sameBrand: '/api/products' });
    assert.equal(absent.maker, undefined);
  });

  test('HAL renders the same fields and links', async () => {
    const hal = (await read('/api/products/1', 'application/hal+json')).json() as { _links: Record<string, { href: string }>; price: unknown };
    assert.equal(hal._links['sameBrand']?.href, '/api/products?brand=acme');
    assert.equal(hal._links['maker']?.href, '/api/brands/acme');
    assert.deepEqual(hal.price, { amount: 12.5, currency: 'EUR' });
  });

  test('following the query link lists the brand: the filter reaches the upstream under its name, members rendered by their pointers', async () => {
    const first = (await read('/api/products/1')).json() as { links: Record<string, string> };
    const list = await read(first.links['sameBrand'] as string);
    assert.equal(list.status, 200, list.text);
    const page = list.json() as { items: { id: number; title: string; links: Record<string, string> }[]; total: number; links: Record<string, string> };
    assert.deepEqual(
      page.items.map((i) => [i.id, i.title]),
      [
        [1, 'Lamp'],
        [4, 'Shade'],
      ],
    );
    assert.equal(page.total, 2);
    assert.equal(page.links['self'], '/api/products?brand=acme&offset=0&limit=10');
    assert.equal(page.items[1]?.links['maker'], '/api/brands/acme');
    assert.ok(
      shop.seen.some((target) => target.startsWith('/products?') && target.includes('filter%5Bbrand%5D=acme')),
      shop.seen.join(' '),
    );
    // The linked brand answers too: its own field taken from a pointer.
    const brand = (await read('/api/brands/acme')).json() as Record<string, unknown>;
    assert.deepEqual(brand, { id: 'acme', name: 'Acme', links: { self: '/api/brands/acme' } });
  });

  test('a declared field whose pointer finds nothing is a 502, as a missing member is', async () => {
    const answer = await read('/api/products/5');
    assert.equal(answer.status, 502, answer.text);
    assert.match((answer.json() as { detail: string }).detail, /title is missing/);
  });

  test('the OpenAPI document names where renamed fields come from and how query links are built', async () => {
    const doc = (await read('/api/openapi.json')).json() as {
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const product = doc.components.schemas['Products'];
    assert.match(String(product?.properties['price']?.['description']), /\/attributes\/price/);
    const links = product?.properties['links'] as { properties: Record<string, { description?: string }> };
    assert.match(String(links.properties['sameBrand']?.description), /\/api\/products\{\?brand\}/);
    assert.equal(links.properties['self']?.description, undefined);
  });
});
