import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

// Regression: 1000 reads of one unknown id made 1000 upstream requests.
describe("the upstream's 404 is remembered for cache.notFoundSeconds", () => {
  let fx: Fixture;
  let token: string;
  const read = (path: string) => get(`${fx.gw.url}${path}`, bearer(token));

  before(async () => {
    fx = await startFixture();
    token = await fx.token();
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('a thousand reads of one unknown id make one upstream request, each a 404 problem', async () => {
    const answers = await Promise.all(Array.from({ length: 1000 }, () => read('/api/customers/2000001')));
    for (const res of answers.slice(0, 3)) assertProblem(res, { status: 404, code: 'HG_ERR_CUSTOMER_NOT_FOUND' });
    assert.ok(answers.every((r) => r.status === 404));
    for (let i = 0; i < 100; i++) assert.equal((await read('/api/customers/2000001')).status, 404);
    assert.equal(fx.upstream.hits('/customers/2000001'), 1);
  });

  test('after cache.notFoundSeconds the upstream is asked again, and a customer that appeared is served', async () => {
    assert.equal((await read('/api/customers/2000002')).status, 404);
    fx.upstream.on('/customers/2000002', { kind: 'json', body: { id: 2000002, name: 'New', status: 'active' } });
    fx.clock.advance(4_000);
    assert.equal((await read('/api/customers/2000002')).status, 404, 'still remembered within 5 s');
    fx.clock.advance(1_001);
    assert.equal((await read('/api/customers/2000002')).status, 200);
    assert.equal(fx.upstream.hits('/customers/2000002'), 2);
  });

  test('a remembered 404 is dropped by a purge of that path', async () => {
    const admin = await startFixture({ admin: { port: 0 } });
    after(() => admin.close());
    const reader = bearer(await admin.token());
    const adminToken = bearer(await admin.token({ claims: { scope: 'hypergate:admin' } }));
    assert.equal((await get(`${admin.gw.url}/api/customers/2000003`, reader)).status, 404);
    admin.upstream.on('/customers/2000003', { kind: 'json', body: { id: 2000003, name: 'New', status: 'active' } });
    assert.equal((await get(`${admin.gw.adminUrl}/cache/api/customers/2000003`, adminToken, 'DELETE')).status, 200);
    assert.equal((await get(`${admin.gw.url}/api/customers/2000003`, reader)).status, 200);
  });

  test('cache.notFoundSeconds 0 asks the upstream every time', async () => {
    const off = await startFixture({ cache: { notFoundSeconds: 0 } });
    after(() => off.close());
    const t = bearer(await off.token());
    for (let i = 0; i < 3; i++) assert.equal((await get(`${off.gw.url}/api/customers/2000004`, t)).status, 404);
    assert.equal(off.upstream.hits('/customers/2000004'), 3);
  });
});
