import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, type HttpAnswer } from '../helpers/gateway.ts';
import { startSampleUpstream, type SampleUpstream } from '../../src/sample-upstream/server.ts';

async function call(url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<HttpAnswer> {
  const res = await request(url, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown };
}

/**
 * The whole write cycle against the embedded sample service (versions as ETags, If-Match checked
 * there), as the curl session of docs/writes.md ("Try it") shows it: what `npm ci && npm start` demonstrates.
 */
describe('a client walks from /api to a customer, changes it, and never reads an older version back', () => {
  let fx: Fixture;
  let sample: SampleUpstream;
  let token: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;

  before(async () => {
    // The sample customer service (embedded in dev auth mode), which takes writes.
    sample = await startSampleUpstream(50);
    fx = await startFixture({ upstream: { url: sample.url } });
    token = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
  });
  after(async () => {
    await fx.close();
    await sample.close();
  });

  test('create, read, update with If-Match, a 412 for the old version, delete, a 404', async () => {
    const root = (await call(url('/api'), 'GET', token)).json() as { links: { customers: string } };
    const created = await call(
      url(root.links.customers),
      'POST',
      { ...token, 'content-type': 'application/json' },
      '{"name":"Grace Hopper","status":"active"}',
    );
    assert.equal(created.status, 201);
    const location = String(created.headers['location']);
    assert.equal(location, '/api/customers/51');
    const read = await call(url(location), 'GET', token);
    assert.equal(read.status, 200);
    assert.equal(read.headers['etag'], created.headers['etag']);
    const v1 = String(read.headers['etag']);
    const updated = await call(url(location), 'PATCH', { ...token, 'content-type': 'application/merge-patch+json', 'if-match': v1 }, '{"status":"inactive"}');
    assert.equal(updated.status, 200);
    assert.equal((updated.json() as { status: string }).status, 'inactive');
    const v2 = String(updated.headers['etag']);
    assert.notEqual(v2, v1);
    const again = await call(url(location), 'GET', token);
    assert.equal((again.json() as { status: string }).status, 'inactive', 'the change is read back at once');
    assert.equal(again.headers['etag'], v2);
    const stale = await call(url(location), 'PUT', { ...token, 'content-type': 'application/json', 'if-match': v1 }, '{"name":"Grace","status":"active"}');
    assert.equal(stale.status, 412);
    const page = (await call(url('/api/customers?offset=50&limit=5'), 'GET', token)).json() as { items: { id: number; status: string }[] };
    assert.deepEqual(
      page.items.map((c) => [c.id, c.status]),
      [[51, 'inactive']],
      'and through the collection',
    );
    assert.equal((await call(url(location), 'DELETE', { ...token, 'if-match': v2 })).status, 204);
    assert.equal((await call(url(location), 'GET', token)).status, 404);
  });

  test('concurrent writes with the same If-Match: exactly one wins, the others get 412', async () => {
    const v = String((await call(url('/api/customers/7'), 'GET', token)).headers['etag']);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(url('/api/customers/7'), 'PATCH', { ...token, 'content-type': 'application/merge-patch+json', 'if-match': v }, `{"name":"Writer ${i}"}`),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = answers.find((a) => a.status === 200) as HttpAnswer;
    const now = await call(url('/api/customers/7'), 'GET', token);
    assert.equal(now.text, winner.text, "the stored representation is the winner's");
    assert.equal(now.headers['etag'], winner.headers['etag']);
  });

  test("read your write in HAL too: the HAL ETag of the answer is the next HAL read's", async () => {
    const hal = { ...token, accept: 'application/hal+json' };
    const v = String((await call(url('/api/customers/8'), 'GET', hal)).headers['etag']);
    const changed = await call(
      url('/api/customers/8'),
      'PUT',
      { ...hal, 'content-type': 'application/json', 'if-match': v },
      '{"name":"Ada","status":"active"}',
    );
    assert.equal(changed.status, 200);
    assert.equal(changed.headers['content-type'], 'application/hal+json');
    const next = await call(url('/api/customers/8'), 'GET', hal);
    assert.equal(next.headers['etag'], changed.headers['etag']);
    assert.equal((next.json() as { name: string }).name, 'Ada');
  });
});
