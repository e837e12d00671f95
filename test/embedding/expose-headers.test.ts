import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { embedOverrides, freshEmbedWorld, SALE_CUSTOMERS } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

const EXPOSED = ['Deprecation', 'Sunset', 'Link'];

describe("answers with embed carry the headers the resource's service exposes (exposeHeaders)", () => {
  let fx: Fixture;
  let any: string;
  const read = (path: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...bearer(any), ...headers });

  before(async () => {
    fx = await startFixture(embedOverrides({ upstream: { exposeHeaders: EXPOSED } }));
    any = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
  });
  beforeEach(async () => {
    await freshEmbedWorld(fx);
    fx.upstream.on('/customers/7', {
      kind: 'json',
      body: { id: 7, name: 'Seven', status: 'active' },
      headers: { deprecation: '@1767225600', link: '<https://docs.example/v3>; rel="successor-version"', 'x-internal-host': 'db-7' },
    });
    // A part's own exposed headers stay with the part: the answer is the customer's.
    fx.upstream.on('/customers/7/orders', { kind: 'json', body: { items: [], total: 0 }, headers: { sunset: 'Wed, 30 Jun 2027 23:59:59 GMT' } });
  });
  after(() => fx.close());

  test("a composite 200 carries the main resource's exposed headers as a plain read of its URL does, and not its parts'", async () => {
    const composite = await read('/api/customers/7?embed=orders');
    assert.equal(composite.status, 200, composite.text);
    const plain = await read('/api/customers/7');
    for (const name of ['deprecation', 'link', 'sunset', 'x-internal-host']) assert.equal(composite.headers[name], plain.headers[name], name);
    assert.equal(composite.headers['deprecation'], '@1767225600');
    assert.equal(composite.headers['sunset'], undefined);
    const hal = await read('/api/customers/7?embed=orders', { accept: 'application/hal+json' });
    assert.equal(hal.headers['link'], '<https://docs.example/v3>; rel="successor-version"');
  });

  test('a 304 of a composite carries none, as a 304 of a plain read', async () => {
    const first = await read('/api/customers/7?embed=orders');
    const again = await read('/api/customers/7?embed=orders', { 'if-none-match': String(first.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.headers['deprecation'], undefined);
  });

  test("a page with embed carries the page's own exposed headers", async () => {
    const items = SALE_CUSTOMERS.map((customerId, i) => ({ id: i + 1, total: 10 + i, customerId }));
    fx.upstream.on('/sales?offset=0&limit=20', { kind: 'json', body: { items, total: 20 }, headers: { sunset: 'Thu, 01 Jul 2027 00:00:00 GMT' } });
    const composite = await read('/api/sales?embed=items.customer');
    assert.equal(composite.status, 200);
    assert.equal(composite.headers['sunset'], 'Thu, 01 Jul 2027 00:00:00 GMT');
    assert.equal(composite.headers['sunset'], (await read('/api/sales')).headers['sunset']);
  });
});
