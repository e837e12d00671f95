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
