import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mergeConfig } from '../../src/config/load.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { gate, waitFor } from '../helpers/wait.ts';

describe('reloading the targets of a service', () => {
  let fx: Fixture;
  let ups: TestUpstream[];
  let auth: Record<string, string>;
  const read = (id: number) => get(`${fx.gw.url}/api/customers/${id}`, auth);
  const customersSeen = (u: TestUpstream) => u.paths.filter((p) => p.startsWith('/customers/')).length;

  before(async () => {
    ups = [await startTestUpstream(), await startTestUpstream(), await startTestUpstream()];
    fx = await startFixture({ upstream: { url: null, balance: 'round-robin', targets: [{ url: ups[0]!.url }, { url: ups[1]!.url }] } });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  after(async () => {
    await fx.close();
    await Promise.all(ups.map((u) => u.close()));
  });

  test('a target removed by a reload finishes the request it holds; new requests go to the targets of the new config', async () => {
    const held = gate();
    ups[0]!.on('/customers/1', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 1, name: 'Customer 1', status: 'active' } } });
    ups[1]!.on('/customers/1', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 1, name: 'Customer 1', status: 'active' } } });
    const inFlight = read(1);
    await waitFor(() => ups[0]!.active() + ups[1]!.active() === 1, 'the request held by a target');
    await fx.gw.gateway.reload(configWith(mergeConfig(fx.gw.gateway.config, { upstream: { targets: [{ url: ups[2]!.url }, { url: ups[1]!.url }] } })));
    held.open();
    assert.equal((await inFlight).status, 200);
    for (const u of ups) u.reset();
    for (let id = 2; id < 8; id++) assert.equal((await read(id)).status, 200);
    assert.equal(customersSeen(ups[0]!), 0, 'the removed target gets no new request');
    assert.equal(customersSeen(ups[1]!), 3);
    assert.equal(customersSeen(ups[2]!), 3);
  });
});
