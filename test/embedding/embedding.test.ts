import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { embedOverrides, freshEmbedWorld, SALE_CUSTOMERS } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, type HttpAnswer } from '../helpers/gateway.ts';

const HAL = { accept: 'application/hal+json' };
type Json = Record<string, unknown>;

describe('embedding (?embed=)', () => {
  let fx: Fixture;
  let any: string;
  let own1: string;
  const read = (path: string, token = any, headers: Record<string, string> = {}): Promise<HttpAnswer> =>
    get(`${fx.gw.url}${path}`, { ...bearer(token), ...headers });

  before(async () => {
    fx = await startFixture(embedOverrides());
    any = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
    own1 = await fx.token({ claims: { customer_id: 1 } });
  });
  beforeEach(() => freshEmbedWorld(fx));
  after(() => fx.close());

  test('a customer with its orders, in plain JSON: the orders under embedded, each part as its own URL gives it, links kept', async () => {
    const res = await read('/api/customers/7?embed=orders');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['embed-status'], undefined);
    const customer = (await read('/api/customers/7')).json() as Json;
    const orders = (await read('/api/customers/7/orders')).json();
    assert.deepEqual(res.json(), {
      ...customer,
      links: { self: '/api/customers/7?embed=orders', orders: '/api/customers/7/orders' },
      embedded: { orders },
    });
    assert.deepEqual(fx.upstream.paths, ['/customers/7', '/customers/7/orders']);
  });

  test('a customer with its orders, in HAL: the orders under _embedded, still linked in _links', async () => {
    const res = await read('/api/customers/7?embed=orders', any, HAL);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/hal+json');
    const customer = (await read('/api/customers/7', any, HAL)).json() as Json;
    const orders = (await read('/api/customers/7/orders', any, HAL)).json();
    assert.deepEqual(res.json(), {
      ...customer,
      _links: { self: { href: '/api/customers/7?embed=orders' }, orders: { href: '/api/customers/7/orders' } },
      _embedded: { orders },
    });
  });

  test('a page of 20 sales sharing 3 customers embeds each customer with 3 upstream reads of customers', async () => {
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    const page = res.json() as { items: Json[]; links: Json };
    assert.equal(page.items.length, 20);
    assert.equal(page.links['self'], '/api/sales?offset=0&limit=20&embed=items.customer');
    const customerReads = fx.upstream.paths.filter((p) => p.startsWith('/customers/'));
    assert.deepEqual(customerReads.sort(), ['/customers/1', '/customers/2', '/customers/3']);
    for (const [i, item] of page.items.entries()) {
      const id = SALE_CUSTOMERS[i] as number;
      assert.deepEqual((item['embedded'] as Json)['customer'], (await read(`/api/customers/${id}`)).json(), `sale ${i + 1}`);
    }
  });

  test('a page of sales with their customers in HAL: each member carries _embedded.customer', async () => {
    const res = await read('/api/sales?embed=items.customer', any, HAL);
    assert.equal(res.status, 200);
    const members = ((res.json() as Json)['_embedded'] as Json)['sales'] as Json[];
    assert.equal(members.length, 20);
    const customer2 = (await read('/api/customers/2', any, HAL)).json();
    assert.deepEqual((members[1]?.['_embedded'] as Json)['customer'], customer2);
  });

  test("a collection's own relation and its members' embed together, nested as asked", async () => {
    const res = await read('/api/customers/7/orders?embed=items.customer,customer.orders');
    assert.equal(res.status, 200);
    const body = res.json() as { items: Json[]; links: Json; embedded: { customer: Json } };
    assert.equal(body.links['self'], '/api/customers/7/orders?embed=customer.orders,items.customer');
    assert.deepEqual((body.embedded.customer['embedded'] as Json)['orders'], (await read('/api/customers/7/orders')).json());
    assert.deepEqual((body.items[0]?.['embedded'] as Json)['customer'], (await read('/api/customers/7')).json());
    assert.equal(fx.upstream.hits('/customers/7'), 1);
    assert.equal(fx.upstream.hits('/customers/7/orders'), 1);
  });

  test('an unknown relation, a malformed list, a repeated parameter and too deep a path are 400s naming them, before any upstream request', async () => {
    const cases: [string, RegExp][] = [
      ['/api/customers/7?embed=friends', /"friends" is not an embeddable relation here; this customer embeds orders/],
      ['/api/customers/7?embed=', /names no relation/],
      ['/api/customers/7?embed=orders&embed=orders', /more than once/],
      ['/api/customers/7?embed=orders..x', /"orders\.\.x" is not a relation path/],
      ['/api/sales?embed=items', /names the members/],
      ['/api/customers/7/orders?embed=customer.orders.items.customer', /"customer\.orders\.items\.customer" is 3 relations deep; at most 2/],
    ];
    for (const [path, detail] of cases) {
      const res = await read(path);
      assert.equal(res.status, 400, path);
      assert.equal(problemOf(res).code, 'HG_ERR_INVALID_QUERY', path);
      assert.match(problemOf(res).detail, detail, path);
    }
    assert.equal(fx.upstream.hits(), 0);
  });

  test("another owner's customer is left out and named in Embed-Status, without an upstream read of it", async () => {
    const res = await read('/api/sales?embed=items.customer', own1);
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], 'items.customer=omitted; reason=forbidden');
    const page = res.json() as { items: Json[] };
    for (const [i, item] of page.items.entries()) {
      if (SALE_CUSTOMERS[i] === 1) assert.equal(((item['embedded'] as Json)['customer'] as Json)['id'], 1);
      else assert.equal(item['embedded'], undefined, `sale ${i + 1}`);
    }
    assert.deepEqual(
      fx.upstream.paths.filter((p) => p.startsWith('/customers/')),
      ['/customers/1'],
    );
  });

  test('a part the upstream cannot give is left out (onError omit) and named with its reason; the rest is answered', async () => {
    fx.upstream.on('/customers/2', { kind: 'json', status: 503, body: { error: 'down' } });
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], 'items.customer=omitted; reason=unavailable');
    const page = res.json() as { items: Json[] };
    assert.equal(page.items[1]?.['embedded'], undefined);
    assert.equal(((page.items[0]?.['embedded'] as Json)['customer'] as Json)['id'], 1);
  });

  test('a missing part is left out as not-found', async () => {
    fx.upstream.on('/customers/3', { kind: 'json', status: 404, body: { error: 'not found' } });
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], 'items.customer=omitted; reason=not-found');
  });

  test('a stale copy stands in for a failed part when stale-if-error allows, named stale', async () => {
    await read('/api/sales?embed=items.customer');
    fx.clock.advance(61_000);
    const token = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
    fx.upstream.on('/customers/2', { kind: 'json', status: 503, body: { error: 'down' } });
    const res = await read('/api/sales?embed=items.customer', token);
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], 'items.customer=stale');
    assert.equal(res.headers['cache-control'], 'max-age=0');
    assert.equal((((res.json() as { items: Json[] }).items[1]?.['embedded'] as Json)['customer'] as Json)['id'], 2);
  });

  test('the composite ETag answers 304 while every part is unchanged, and a change to one part makes it 200', async () => {
    const first = await read('/api/sales?embed=items.customer');
    const etag = first.headers['etag'] as string;
    assert.match(etag, /^"e\.[A-Za-z0-9_-]+"$/);
    assert.equal(first.headers['cache-control'], 'max-age=60');
    const again = await read('/api/sales?embed=items.customer', any, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.headers['etag'], etag);
    assert.notEqual((await read('/api/sales?embed=items.customer', any, HAL)).headers['etag'], etag, 'another format, another ETag');
    fx.upstream.on('/customers/2', { kind: 'json', body: { id: 2, name: 'Renamed', status: 'active' } });
    await fx.gw.gateway.purge('/api/customers/2');
    const changed = await read('/api/sales?embed=items.customer', any, { 'if-none-match': etag });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers['etag'], etag);
    assert.equal((((changed.json() as { items: Json[] }).items[1]?.['embedded'] as Json)['customer'] as Json)['name'], 'Renamed');
  });

  test('the shortest lifetime of the parts is the composite Cache-Control, private when a part is', async () => {
    fx.upstream.on('/customers/3', { kind: 'json', body: { id: 3, name: 'C', status: 'active' }, headers: { 'cache-control': 'max-age=5' } });
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.headers['cache-control'], 'max-age=5');
    fx.upstream.on('/customers/7', { kind: 'json', body: { id: 7, name: 'P', status: 'active' }, headers: { 'cache-control': 'private, max-age=30' } });
    const personal = await read('/api/customers/7/orders?embed=customer');
    assert.match(personal.headers['cache-control'] as string, /^(private, max-age=\d+|no-store)$/);
  });
  test('the API root lists what each relation may embed, and the OpenAPI document the embed parameter of each route that takes it', async () => {
    const root = (await read('/api')).json() as Json;
    assert.deepEqual(root['embeddable'], { customers: ['items.orders'], customer: ['orders'], sales: ['items.customer'] });
    const doc = (await read('/api/openapi.json')).json() as { paths: Record<string, { get: { parameters?: { name: string; description: string }[] } }> };
    const embedOf = (path: string) => doc.paths[path]?.get.parameters?.find((p) => p.name === 'embed');
    assert.match(embedOf('/api/sales')?.description ?? '', /Embeddable here: items\.customer\./);
    assert.match(embedOf('/api/customers/{customerId}/orders')?.description ?? '', /Embeddable here: customer, items\.customer\./);
    assert.match(embedOf('/api/customers/{id}')?.description ?? '', /Embeddable here: orders\./);
    assert.match(embedOf('/api/sales/{id}')?.description ?? '', /Embeddable here: customer\./);
    assert.match(embedOf('/api/customers')?.description ?? '', /Embeddable here: items\.orders\./);
  });
});
