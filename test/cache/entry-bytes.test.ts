import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

/**
 * Issue 13, item 2: cache.maxBytes counts what a cached resource really costs in memory, not only
 * its body. The floors are the heap growth measured per customer through a real gateway (bench/
 * RESULTS.md, "what an entry costs"): ~524 bytes with its JSON form, ~339 more with its HAL form.
 */
describe('what a cached resource is charged against cache.maxBytes', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture({});
    auth = bearer(await fx.token({ expiresIn: 3600 }));
  });
  after(() => fx.close());

  test('a customer cached in JSON is charged at least the ~524 bytes of heap it was measured to take', async () => {
    const { cache } = fx.gw.gateway;
    const before = cache.bytes;
    const res = await get(`${fx.gw.url}/api/customers/12345`, auth);
    assert.equal(res.status, 200);
    assert.equal(res.text.length, 135);
    assert.ok(cache.bytes - before >= 524, `charged ${cache.bytes - before} bytes`);
  });

  test('its HAL form, rendered on first use, adds at least the ~339 bytes it was measured to take', async () => {
    const { cache } = fx.gw.gateway;
    assert.equal((await get(`${fx.gw.url}/api/customers/23456`, auth)).status, 200);
    const before = cache.bytes;
    const hal = await get(`${fx.gw.url}/api/customers/23456`, { ...auth, accept: 'application/hal+json' });
    assert.equal(hal.status, 200);
    assert.equal(hal.headers['content-type'], 'application/hal+json');
    assert.ok(cache.bytes - before >= 339, `charged ${cache.bytes - before} more bytes for ${Buffer.byteLength(hal.text)} bytes of HAL`);
  });
});
