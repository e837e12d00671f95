import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send, type HttpAnswer } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };

/**
 * A write the upstream acknowledged (a 2xx, or a 3xx to a POST) happened, whatever its body says:
 * its answer is final under an Idempotency-Key, so a retry with the key replays it instead of
 * making the change again. A 202 says the change is accepted, not made: answered 202, nothing cached.
 */
describe('writes the upstream acknowledged', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  let reader: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;
  const sent = (method: string): number => fx.upstream.requests.filter((r) => r.method === method).length;

  before(async () => {
    fx = await startFixture({ upstream: { maxResponseBytes: 4096, breaker: { failures: 100 } } });
    writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
    reader = bearer(await fx.token());
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  /** Sends the same keyed write twice; both answers. */
  async function twice(method: 'POST' | 'PATCH', path: string, key: string, body: string): Promise<[HttpAnswer, HttpAnswer]> {
    const headers = { ...writer, ...(method === 'PATCH' ? { ...mergePatch, 'if-match': '*' } : json), 'idempotency-key': `"${key}"` };
    const first = await send(url(path), method, headers, body);
    const again = await send(url(path), method, headers, body);
    return [first, again];
  }

  test('a 2xx whose body is not valid JSON is final: the retry is replayed, not sent again', async () => {
    fx.upstream.on('POST /customers', { kind: 'raw', status: 201, body: '{"id": 801, "name": ', headers: { 'content-type': 'application/json' } });
    const [first, again] = await twice('POST', '/api/customers', 'bad-json-801', '{"name":"Made","status":"active"}');
    assertProblem(first, { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    assert.equal(again.status, first.status);
    assert.equal(again.text, first.text);
    assert.equal(sent('POST'), 1, 'one customer was created, not two');
  });

  test('a 2xx whose body is over upstream.maxResponseBytes is final: the retry is replayed, not sent again', async () => {
    fx.upstream.on('PATCH /customers/802', { kind: 'json', status: 200, body: { id: 802, name: 'x'.repeat(8000), status: 'active' } });
    const [first, again] = await twice('PATCH', '/api/customers/802', 'too-large-802', '{"name":"Large"}');
    assertProblem(first, { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    assert.equal(again.text, first.text);
    assert.equal(sent('PATCH'), 1, 'the change was made once');
  });

  test('a 3xx to a POST is final: the retry is replayed, not sent again', async () => {
    fx.upstream.on('POST /customers', { kind: 'raw', status: 303, body: '', headers: { location: '/customers/803' } });
    const [first, again] = await twice('POST', '/api/customers', 'see-other-803', '{"name":"Elsewhere","status":"active"}');
    assertProblem(first, { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    assert.equal(again.text, first.text);
    assert.equal(sent('POST'), 1, 'one customer was created, not two');
  });

  test('a 202 to a POST is a 202 without Location, cached nowhere, and replayed under its key', async () => {
    fx.upstream.on('POST /customers', { kind: 'json', status: 202, body: { id: 804, name: 'Later', status: 'active' } });
    const [first, again] = await twice('POST', '/api/customers', 'accepted-804', '{"name":"Later","status":"active"}');
    assert.equal(first.status, 202);
    assert.equal(first.headers['location'], undefined);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.equal(again.status, 202);
    assert.equal(sent('POST'), 1);
    assert.equal(fx.gw.gateway.cache.get('/api/customers/804'), undefined, 'the accepted record is not the item');
    // The upstream has not made it yet: a read asks it, and says so.
    fx.upstream.on('GET /customers/804', { kind: 'json', status: 404, body: {} });
    assert.equal((await get(url('/api/customers/804'), reader)).status, 404);
  });
});
