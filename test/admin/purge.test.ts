import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('cache purge on the admin listener', () => {
  let fx: Fixture;
  let reader: Record<string, string>;
  let admin: Record<string, string>;

  before(async () => {
    fx = await startFixture({ admin: { port: 0 } });
    reader = bearer(await fx.token());
    admin = bearer(await fx.token({ claims: { sub: 'ops', scope: 'hypergate:admin' } }));
  });
  after(() => fx.close());

  async function warm(...ids: number[]): Promise<void> {
    for (const id of ids) assert.equal((await get(`${fx.gw.url}/api/customers/${id}`, reader)).status, 200);
  }

  it('refuses a purge without a token with 401 and a Bearer challenge', async () => {
    const res = await get(`${fx.gw.adminUrl}/cache/customers/1`, {}, 'DELETE');
    assert.equal(res.status, 401);
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="hypergate"/);
  });

  it('refuses a purge with a token that lacks admin.scope with 403', async () => {
    const res = await get(`${fx.gw.adminUrl}/cache`, reader, 'DELETE');
    assert.equal(res.status, 403);
    assert.equal(problemOf(res).code, 'HG_ERR_AUTH_INSUFFICIENT_SCOPE');
    assert.match(String(res.headers['www-authenticate']), /scope="hypergate:admin"/);
  });

  it('drops one customer so the next read goes to the upstream, and leaves the others cached', async () => {
    await warm(11, 12);
    const hitsBefore = fx.upstream.hits();
    const res = await get(`${fx.gw.adminUrl}/cache/customers/11`, admin, 'DELETE');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { purged: 1 });
    await warm(11, 12);
    assert.equal(fx.upstream.hits('/customers/11'), 2);
    assert.equal(fx.upstream.hits() - hitsBefore, 1);
  });

  // Regression: the purge answered {"purged":1} while the HAL copy and the pages showing the
  // customer kept being served with the old name.
  it('drops every representation of the item and every cached page that shows it', async () => {
    const hal = { ...reader, accept: 'application/hal+json' };
    fx.upstream.on('/customers/13', { kind: 'json', body: { id: 13, name: 'Old', status: 'active' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/13`, hal)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers?offset=10&limit=5`, reader)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/13`, reader)).status, 200);
    fx.upstream.on('/customers/13', { kind: 'json', body: { id: 13, name: 'New', status: 'active' } });
    const res = await get(`${fx.gw.adminUrl}/cache/api/customers/13`, admin, 'DELETE');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { purged: 2 }, 'the customer (one entry for both formats) and the page');
    const again = (await get(`${fx.gw.url}/api/customers/13`, hal)).json() as { name: string };
    assert.equal(again.name, 'New', 'the HAL representation was dropped too');
    assert.equal(fx.upstream.hits('/customers?offset=10&limit=5'), 1);
    await get(`${fx.gw.url}/api/customers?offset=10&limit=5`, reader);
    assert.equal(fx.upstream.hits('/customers?offset=10&limit=5'), 2, 'the page was dropped');
  });

  it("drops what lies below an item: a customer's orders go with it", async () => {
    // An item's purge also drops every cached page of its collection: start from an empty cache to count only these.
    await get(`${fx.gw.adminUrl}/cache`, admin, 'DELETE');
    assert.equal((await get(`${fx.gw.url}/api/customers/31/orders`, reader)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/31/orders/3101`, reader)).status, 200);
    const res = await get(`${fx.gw.adminUrl}/cache/api/customers/31`, admin, 'DELETE');
    assert.deepEqual(res.json(), { purged: 2 });
    await get(`${fx.gw.url}/api/customers/31/orders`, reader);
    assert.equal(fx.upstream.hits('/customers/31/orders'), 2);
  });

  it('says 0 for a customer that is not cached and 404 for a non-canonical id', async () => {
    assert.deepEqual((await get(`${fx.gw.adminUrl}/cache/customers/999`, admin, 'DELETE')).json(), { purged: 0 });
    assert.equal((await get(`${fx.gw.adminUrl}/cache/customers/007`, admin, 'DELETE')).status, 404);
  });

  it('drops everything with DELETE /cache', async () => {
    await warm(21, 22, 23);
    const res = await get(`${fx.gw.adminUrl}/cache`, admin, 'DELETE');
    assert.equal(res.status, 200);
    assert.ok((res.json() as { purged: number }).purged >= 3);
    assert.equal(fx.gw.gateway.cache.size, 0);
  });

  it('accepts only DELETE on the purge paths', async () => {
    const res = await get(`${fx.gw.adminUrl}/cache`, admin, 'GET');
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'DELETE');
  });
});
