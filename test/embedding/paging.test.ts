import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { embedOverrides, freshEmbedWorld, SALE_CUSTOMERS } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

type Json = Record<string, unknown>;
const PAGE_RELS = ['first', 'prev', 'next', 'last'];

describe('the paging links of a page asked with embed keep the embed list', () => {
  let fx: Fixture;
  let any: string;
  const read = (path: string, headers: Record<string, string> = {}) => get(`${fx.gw.url}${path}`, { ...bearer(any), ...headers });

  before(async () => {
    fx = await startFixture(embedOverrides());
    any = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
  });
  beforeEach(async () => {
    await freshEmbedWorld(fx);
    // The 20 sales, 5 a page.
    for (let offset = 0; offset < 20; offset += 5) {
      const items = SALE_CUSTOMERS.slice(offset, offset + 5).map((customerId, i) => ({ id: offset + i + 1, total: 10 + offset + i, customerId }));
      fx.upstream.on(`/sales?offset=${offset}&limit=5`, { kind: 'json', body: { items, total: 20 } });
    }
  });
  after(() => fx.close());

  test('in plain JSON, first, prev, next and last are the plain links with the canonical embed list; next leads to a composite', async () => {
    const composite = await read('/api/sales?offset=5&limit=5&embed=items.customer');
    assert.equal(composite.status, 200, composite.text);
    const links = (composite.json() as { links: Json }).links;
    const plain = ((await read('/api/sales?offset=5&limit=5')).json() as { links: Json }).links;
    for (const rel of PAGE_RELS) {
      assert.equal(typeof plain[rel], 'string', rel);
      assert.equal(links[rel], `${String(plain[rel])}&embed=items.customer`, rel);
    }
    const next = await read(String(links['next']));
    assert.equal(next.status, 200);
    const page = next.json() as { items: Json[]; links: Json };
    assert.equal(page.links['self'], '/api/sales?offset=10&limit=5&embed=items.customer');
    assert.equal(((page.items[0]?.['embedded'] as Json)['customer'] as Json)['id'], SALE_CUSTOMERS[10]);
  });

  test('in HAL, each paging link keeps the embed list in its href', async () => {
    const hal = { accept: 'application/hal+json' };
    const links = ((await read('/api/sales?offset=5&limit=5&embed=items.customer', hal)).json() as { _links: Record<string, Json> })._links;
    const plain = ((await read('/api/sales?offset=5&limit=5', hal)).json() as { _links: Record<string, Json> })._links;
    for (const rel of PAGE_RELS) assert.deepEqual(links[rel], { ...plain[rel], href: `${String(plain[rel]?.['href'])}&embed=items.customer` }, rel);
  });

  test('the links of the parts and members lead to them alone', async () => {
    const page = (await read('/api/sales?offset=5&limit=5&embed=items.customer')).json() as { items: Json[] };
    const member = page.items[0] as Json;
    assert.equal((member['links'] as Json)['self'], '/api/sales/6');
    assert.equal((((member['embedded'] as Json)['customer'] as Json)['links'] as Json)['self'], `/api/customers/${SALE_CUSTOMERS[5]}`);
  });
});
