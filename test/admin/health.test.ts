import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../helpers/clock.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, startGateway } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer } from '../helpers/keys.ts';
import { startTestUpstream } from '../helpers/upstream.ts';

describe('health and readiness on the admin listener', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ admin: { port: 0 } });
  });
  after(() => fx.close());

  it('answers /healthz with 200 while the process is alive', async () => {
    const res = await get(`${fx.gw.adminUrl}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  });

  it('answers /readyz with 200 once the keys are loaded', async () => {
    const res = await get(`${fx.gw.adminUrl}/readyz`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: 'ready' });
  });

  it('answers /readyz with a 503 problem naming the check that holds readiness back', async () => {
    let open = true;
    fx.gw.gateway.addReadinessCheck('upstream circuit breaker', () => (open ? 'open' : null));
    const res = await get(`${fx.gw.adminUrl}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(res).code, 'HG_ERR_NOT_READY');
    assert.match(problemOf(res).detail, /upstream circuit breaker: open/);
    open = false;
    assert.equal((await get(`${fx.gw.adminUrl}/readyz`)).status, 200);
  });

  it('refuses other methods with 405 and unknown paths with 404', async () => {
    const res = await get(`${fx.gw.adminUrl}/healthz`, {}, 'POST');
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, HEAD');
    assert.equal((await get(`${fx.gw.adminUrl}/api/customers/1`, bearer(await fx.token()))).status, 404);
  });
});

describe('readiness when the keys are missing or the gateway is stopping', () => {
  it('is 503 while the JWKS cannot be fetched, and 200 once it can (probes fetch at most once per cooldown)', async () => {
    const key = await makeKey('ES256');
    const jwks = await startJwksServer([key.publicJwk]);
    const jwksUrl = jwks.url;
    await jwks.close();
    const upstream = await startTestUpstream();
    const clock = new ManualClock();
    const gw = await startGateway({ upstream: { url: upstream.url }, auth: { jwksUrl, jwksCooldownMs: 10_000 }, admin: { port: 0 } }, { clock });
    try {
      const res = await get(`${gw.adminUrl}/readyz`);
      assert.equal(res.status, 503);
      assert.match(problemOf(res).detail, /signing keys are not loaded yet \(JWKS http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json: connection refused\)/);
      // The key server comes up on the same port.
      const port = Number(new URL(jwksUrl).port);
      const { createServer } = await import('node:http');
      let fetches = 0;
      const server = createServer((_req, r) => {
        fetches++;
        r.writeHead(200, { 'content-type': 'application/json' });
        r.end(JSON.stringify({ keys: [key.publicJwk] }));
      });
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      try {
        // Within the cooldown after the start-up fetch, probes do not fetch.
        for (let i = 0; i < 5; i++) assert.equal((await get(`${gw.adminUrl}/readyz`)).status, 503);
        assert.equal(fetches, 0);
        clock.advance(10_000);
        let status = 0;
        for (let i = 0; i < 50 && status !== 200; i++) {
          status = (await get(`${gw.adminUrl}/readyz`)).status;
          if (status !== 200) await new Promise((r) => setTimeout(r, 20));
        }
        assert.equal(status, 200);
        assert.equal(fetches, 1);
        const token = await signToken(key);
        assert.equal((await get(`${gw.url}/api/customers/1`, bearer(token))).status, 200);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  it('is 503 as soon as shutdown starts, while requests still drain', async () => {
    const fx = await startFixture({ admin: { port: 0 } });
    try {
      fx.upstream.on('/customers/7', { kind: 'delay', ms: 300, then: { kind: 'json', body: { id: 7, name: 'Slow', status: 'active' } } });
      const slow = get(`${fx.gw.url}/api/customers/7`, bearer(await fx.token()));
      await new Promise((r) => setTimeout(r, 50));
      const closing = fx.gw.gateway.close(5000);
      assert.equal(fx.gw.gateway.readiness(), 'shutting down');
      assert.equal((await slow).status, 200);
      await closing;
    } finally {
      await fx.close();
    }
  });
});
