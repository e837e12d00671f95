import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { startFixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';

/**
 * The upstream's request headers are built as undici's flat [name, value, ...] list (client.ts
 * #headersFor), where an object used to be written: a name must still reach the upstream once,
 * with the value that was written last.
 */
describe('the headers an upstream request carries', () => {
  test("a write's Idempotency-Key takes the place of a configured header of that name; a read sends the configured one", async () => {
    const fx = await startFixture({
      resources: { customers: { requireIfMatch: false } },
      upstream: { headers: { 'Idempotency-Key': 'configured' } },
    });
    after(() => fx.close());
    const writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 900, name: 'New', status: 'active' } });
    const res = await send(`${fx.gw.url}/api/customers`, 'POST', { ...writer, 'content-type': 'application/json', 'idempotency-key': '"k-1"' }, '{"name":"New","status":"active"}');
    assert.equal(res.status, 201);
    assert.equal(fx.upstream.headersSeen[0]?.['idempotency-key'], '"k-1"');
    assert.equal((await get(`${fx.gw.url}/api/customers/7`, writer)).status, 200);
    assert.equal(fx.upstream.headersSeen[1]?.['idempotency-key'], 'configured');
  });

  test('two forwardClaims entries that name one header in different case send it once, with the last one\'s claim', async () => {
    const fx = await startFixture({ upstream: { forwardClaims: { 'X-Who': 'sub', 'x-who': 'tenant' } } });
    after(() => fx.close());
    const token = await fx.token({ claims: { sub: 'alice', tenant: 'acme' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    assert.equal(fx.upstream.headersSeen[0]?.['x-who'], 'acme');
  });
});
