import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { startFixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';

describe('what reaches the upstream', () => {
  test("the client's Authorization is never forwarded unless the service says forwardAuthorization", async () => {
    const fx = await startFixture();
    after(() => fx.close());
    const token = await fx.token();
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    assert.equal(fx.upstream.headersSeen[0]?.['authorization'], undefined);
    const forwarding = await startFixture({ upstream: { forwardAuthorization: true, forwardClaims: { 'X-Subject': 'sub', 'X-Tenant': 'tenant' } } });
    after(() => forwarding.close());
    const t2 = await forwarding.token({ claims: { sub: 'alice', tenant: { nested: true } } });
    assert.equal((await get(`${forwarding.gw.url}/api/customers/1`, bearer(t2))).status, 200);
    const seen = forwarding.upstream.headersSeen[0] ?? {};
    assert.equal(seen['authorization'], `Bearer ${t2}`);
    assert.equal(seen['x-subject'], 'alice');
    assert.equal(seen['x-tenant'], undefined, 'a claim that is not a string or number sends no header');
  });

  // Regression: an invalid record or an id mismatch was counted outcome="ok", so an alert on bad_body never fired.
  test('a record that breaks the declaration is counted as bad_body, not ok', async () => {
    const fx = await startFixture({ admin: { port: 0 } });
    after(() => fx.close());
    const token = await fx.token();
    fx.upstream.on('/customers/5', { kind: 'json', body: { id: 6, name: 'x', status: 'y' } });
    fx.upstream.on('/customers/8', { kind: 'json', body: { id: 8, status: 'y' } });
    for (const id of [5, 8]) assert.equal((await get(`${fx.gw.url}/api/customers/${id}`, bearer(token))).status, 502);
    const text = (await get(`${fx.gw.adminUrl}/metrics`)).text;
    assert.equal(sample(text, 'hypergate_upstream_requests_total', { service: 'upstream', outcome: 'bad_body' }), 2);
    assert.equal(sample(text, 'hypergate_upstream_requests_total', { service: 'upstream', outcome: 'ok' }), undefined);
  });
});
