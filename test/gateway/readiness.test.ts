import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

/**
 * /readyz says whether this gateway should get traffic: one failing backend must not take every
 * instance out of a load balancer's rotation (their cached and other resources still answer),
 * unless the operator marked that backend critical.
 */
describe('readiness and the upstream services', () => {
  let fx: Fixture;
  let catalogue: TestUpstream;
  let auth: Record<string, string>;
  const readyz = () => get(`${fx.gw.adminUrl}/readyz`);

  before(async () => {
    catalogue = await startTestUpstream();
    catalogue.on('/products/ok', { kind: 'json', body: { sku: 'ok' } });
    fx = await startFixture({
      admin: { port: 0 },
      upstream: { breaker: { failures: 1, cooldownMs: 5000 } },
      upstreams: { catalogue: { url: catalogue.url, critical: true, breaker: { failures: 1, cooldownMs: 5000 } } },
      resources: { products: { path: '/api/products/{sku}', params: { sku: 'string' }, upstream: '/products/{sku}', service: 'catalogue', fields: ['sku'] } },
    });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  beforeEach(async () => {
    // Both breakers closed again: past the cooldown, one good probe each.
    fx.upstream.reset();
    catalogue.reset();
    catalogue.on('/products/ok', { kind: 'json', body: { sku: 'ok' } });
    fx.clock.advance(5000);
    await get(`${fx.gw.url}/api/customers/1`, auth);
    await get(`${fx.gw.url}/api/products/ok`, auth);
  });
  after(async () => {
    // The catalogue first: it is up even when the gateway could not start.
    await catalogue?.close();
    await fx?.close();
  });

  test('an open breaker of a service not marked critical leaves the gateway ready, and the 200 body names the service', async () => {
    assert.deepEqual((await readyz()).json(), { status: 'ready' });
    fx.upstream.on('/customers/2', { kind: 'json', status: 500, body: {} });
    assert.equal((await get(`${fx.gw.url}/api/customers/2`, auth)).status, 502);
    assert.equal((await get(`${fx.gw.url}/api/customers/3`, auth)).status, 503, 'the breaker is open');
    const res = await readyz();
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), {
      status: 'ready',
      warnings: ['the upstream service "upstream" is failing: its circuit breaker is open (it is not upstream.critical, so this instance stays ready)'],
    });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, auth)).status, 200, 'what is cached still answers');
    assert.equal((await get(`${fx.gw.url}/api/products/ok`, auth)).status, 200, 'the other service still answers');
  });

  test('an open breaker of a service marked critical makes the gateway not ready, naming the service', async () => {
    catalogue.on('/products/bad', { kind: 'json', status: 500, body: {} });
    assert.equal((await get(`${fx.gw.url}/api/products/bad`, auth)).status, 502);
    const res = await readyz();
    assert.equal(res.status, 503);
    assert.equal(problemOf(res).code, 'HG_ERR_NOT_READY');
    assert.match(problemOf(res).detail, /upstream: the circuit breaker is open \(the upstream service "catalogue" failing\)/);
    fx.clock.advance(5000);
    assert.equal((await readyz()).status, 200, 'half-open: traffic may come to probe');
  });
});

describe('readiness while the signing keys are stale', () => {
  test('stays 200 while refreshes of the JWKS fail, and its body says the keys are stale', async () => {
    const fx = await startFixture({ admin: { port: 0 } });
    try {
      assert.deepEqual((await get(`${fx.gw.adminUrl}/readyz`)).json(), { status: 'ready' });
      fx.jwks.setFault({ kind: 'status', status: 500 });
      fx.clock.advance(90_000);
      await fx.gw.gateway.keySource.remote?.refresh();
      const res = await get(`${fx.gw.adminUrl}/readyz`);
      assert.equal(res.status, 200);
      const body = res.json() as { status: string; warnings: string[] };
      assert.equal(body.status, 'ready');
      assert.equal(body.warnings.length, 1);
      assert.match(
        body.warnings[0] ?? '',
        new RegExp(
          `^the signing keys are stale: the JWKS at ${fx.jwks.url.replace(/[./]/g, '\\$&')} could not be fetched \\(HTTP 500\\); the key set fetched 90 s ago is in use$`,
        ),
      );
      assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(await fx.token()))).status, 200);
      fx.jwks.setFault(null);
      await fx.gw.gateway.keySource.remote?.refresh();
      assert.deepEqual((await get(`${fx.gw.adminUrl}/readyz`)).json(), { status: 'ready' });
    } finally {
      await fx.close();
    }
  });
});
