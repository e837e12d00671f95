import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sampleCustomer } from '../../src/sample-upstream/data.ts';
import { startSampleUpstream, type SampleUpstream } from '../../src/sample-upstream/server.ts';
import { get } from '../helpers/gateway.ts';

describe('embedded sample customer service', () => {
  let sample: SampleUpstream;
  before(async () => {
    sample = await startSampleUpstream(10_000);
  });
  after(() => sample.close());

  test('listens on loopback only', () => {
    assert.match(sample.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('serves every id from 1 to the configured count with id, name and status', async () => {
    for (const id of [1, 42, 9_999, 10_000]) {
      const res = await get(`${sample.url}/customers/${id}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      const record = res.json() as { id: number; name: string; status: string };
      assert.equal(record.id, id);
      assert.equal(typeof record.name, 'string');
      assert.equal(typeof record.status, 'string');
    }
  });

  test('answers 404 beyond the data set and for other paths or methods', async () => {
    assert.equal((await get(`${sample.url}/customers/10001`)).status, 404);
    assert.equal((await get(`${sample.url}/customers/0`)).status, 404);
    assert.equal((await get(`${sample.url}/customers/abc`)).status, 404);
    assert.equal((await get(`${sample.url}/customers/1`, {}, 'POST')).status, 405, 'writes go to /customers (POST) or an item (PUT, PATCH, DELETE)');
  });

  test('the data set is deterministic and its statuses vary', () => {
    assert.deepEqual(sampleCustomer(1234), sampleCustomer(1234));
    const statuses = new Set(Array.from({ length: 10_000 }, (_, i) => sampleCustomer(i + 1).status));
    assert.deepEqual([...statuses].sort(), ['active', 'inactive', 'pending', 'suspended']);
    const names = new Set(Array.from({ length: 1000 }, (_, i) => sampleCustomer(i + 1).name));
    assert.ok(names.size > 100, `only ${names.size} distinct names`);
  });
});
