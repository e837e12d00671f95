import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sampleOrder, sampleOrderIds } from '../../src/sample-upstream/data.ts';
import { startSampleUpstream, type SampleUpstream } from '../../src/sample-upstream/server.ts';
import { get } from '../helpers/gateway.ts';

describe('the sample upstream collection and orders', () => {
  let sample: SampleUpstream;
  before(async () => {
    sample = await startSampleUpstream(30);
  });
  after(() => sample.close());

  test('a page lists customers offset+1.. with the total', async () => {
    const res = await get(`${sample.url}/customers?offset=25&limit=10`);
    const body = res.json() as { items: { id: number }[]; total: number };
    assert.deepEqual(
      body.items.map((c) => c.id),
      [26, 27, 28, 29, 30],
    );
    assert.equal(body.total, 30);
  });

  test('orders are deterministic and belong to their customer', async () => {
    const id = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].find((n) => sampleOrderIds(n).length > 0) as number;
    const list = (await get(`${sample.url}/customers/${id}/orders`)).json() as { items: { id: number; customerId: number }[] };
    assert.deepEqual(
      list.items.map((o) => o.id),
      sampleOrderIds(id),
    );
    const orderId = sampleOrderIds(id)[0] as number;
    const one = await get(`${sample.url}/customers/${id}/orders/${orderId}`);
    assert.deepEqual(one.json(), sampleOrder(id, orderId));
    assert.deepEqual(sampleOrder(id, orderId), sampleOrder(id, orderId));
  });

  test('unknown customers, foreign orders, bad queries and other methods are refused', async () => {
    assert.equal((await get(`${sample.url}/customers/31/orders`)).status, 404);
    assert.equal((await get(`${sample.url}/customers/1/orders/201`)).status, 404);
    assert.equal((await get(`${sample.url}/customers?offset=01&limit=5`)).status, 404);
    assert.equal((await get(`${sample.url}/customers/1`, {}, 'POST')).status, 405, 'writes go to /customers (POST) or an item (PUT, PATCH, DELETE)');
  });
});
