import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { embedOverrides, freshEmbedWorld, serveSales } from '../helpers/embed-world.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';
import { defaultRecord } from '../helpers/upstream.ts';
import { gate, waitFor } from '../helpers/wait.ts';

type Json = Record<string, unknown>;

describe('embedded parts through a batch endpoint (embed.<rel>.batch)', () => {
  let fx: Fixture;
  let any: string;
  const log = captureLog('debug');
  const read = (path: string) => get(`${fx.gw.url}${path}`, bearer(any));

  before(async () => {
    const overrides = embedOverrides();
    const resources = overrides['resources'] as Record<string, Record<string, unknown>>;
    (resources['sales'] as Record<string, unknown>)['embed'] = {
      customer: { target: 'customers', batch: { upstream: '/customers?ids={ids}', items: '/data' } },
    };
    fx = await startFixture(overrides, { logger: log.logger });
    any = await fx.token({ claims: { scope: 'customers:read customers:read:any' } });
  });
  beforeEach(() => freshEmbedWorld(fx));
  after(() => fx.close());

  test('the customers of a page are read in one upstream request, each stored as the customer itself', async () => {
    fx.upstream.on('/customers?ids=1,2,3', { kind: 'json', body: { data: [defaultRecord(1), defaultRecord(2), defaultRecord(3)] } });
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    assert.deepEqual(
      fx.upstream.paths.filter((p) => p.startsWith('/customers')),
      ['/customers?ids=1,2,3'],
    );
    const items = (res.json() as { items: Json[] }).items;
    const direct = await read('/api/customers/2');
    assert.equal(direct.headers['cache-status'], 'hypergate; hit; ttl=60', 'following the link is a cache hit');
    assert.deepEqual((items[1]?.['embedded'] as Json)['customer'], direct.json());
  });

  test('a record the batch answer lacks is read one by one; a failed batch leaves every part to its own read', async () => {
    fx.upstream.on('/customers?ids=1,2,3', { kind: 'json', body: { data: [defaultRecord(1), defaultRecord(3)] } });
    assert.equal((await read('/api/sales?embed=items.customer')).status, 200);
    assert.deepEqual(
      fx.upstream.paths.filter((p) => p.startsWith('/customers')),
      ['/customers?ids=1,2,3', '/customers/2'],
    );
    fx.upstream.reset();
    serveSales(fx.upstream);
    await fx.gw.gateway.purge(null);
    fx.upstream.on('/customers?ids=1,2,3', { kind: 'json', status: 500, body: {} });
    const res = await read('/api/sales?embed=items.customer');
    assert.equal(res.status, 200);
    assert.equal(res.headers['embed-status'], undefined);
    assert.equal(fx.upstream.paths.filter((p) => /^\/customers\/\d$/.test(p)).length, 3);
  });

  test('two answers missing the same parts at once make one batch request: the second joins the one under way', async () => {
    const batch = gate();
    fx.upstream.on('/customers?ids=1,2,3', {
      kind: 'wait',
      until: batch.promise,
      then: { kind: 'json', body: { data: [defaultRecord(1), defaultRecord(2), defaultRecord(3)] } },
    });
    const joins = (): number => log.lines.filter((line) => line.includes('a batch read of the same embedded parts is under way; joined')).length;
    const before = joins();
    const first = read('/api/sales?embed=items.customer');
    await waitFor(() => fx.upstream.paths.includes('/customers?ids=1,2,3'), 'the first batch request');
    const second = read('/api/sales?embed=items.customer');
    await waitFor(() => joins() > before, 'the second answer to join the batch under way');
    batch.open();
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.deepEqual(b.json(), a.json());
    assert.deepEqual(
      fx.upstream.paths.filter((p) => p.startsWith('/customers')),
      ['/customers?ids=1,2,3'],
    );
  });
});
