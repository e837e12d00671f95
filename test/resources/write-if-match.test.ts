import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

const mergePatch = { 'content-type': 'application/merge-patch+json' };
const json = { 'content-type': 'application/json' };

// Regression: a read refused W/"…" in If-Match (strong comparison, RFC 9110 section 13.1.1) while
// a write sent it on to the upstream. One rule now: a weak entity-tag never matches If-Match.
describe('If-Match on a write uses the strong comparison, as on a read', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;
  const writesSent = (): { method: string; path: string }[] => fx.upstream.requests.filter((r) => r.method !== 'GET');

  before(async () => {
    fx = await startFixture();
    writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('the weak form of the current ETag is a 412 on the write as on the read, and nothing is sent', async () => {
    fx.upstream.on('GET /customers/31', { kind: 'json', body: { id: 31, name: 'Before', status: 'active' }, headers: { etag: '"v7"' } });
    const etag = String((await get(url('/api/customers/31'), writer)).headers['etag']);
    assert.match(etag, /^"v7\./);
    assert.equal((await get(url('/api/customers/31'), { ...writer, 'if-match': `W/${etag}` })).status, 412);
    for (const [method, headers, body] of [
      ['PATCH', mergePatch, '{"name":"After"}'],
      ['PUT', json, '{"name":"After","status":"active"}'],
      ['DELETE', json, undefined],
    ] as const) {
      const res = await send(url('/api/customers/31'), method, { ...writer, ...headers, 'if-match': `W/${etag}` }, body);
      assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
    }
    assert.deepEqual(writesSent(), []);
  });

  test('a digest ETag in its weak form is a 412 too, though the body it names is current', async () => {
    const etag = String((await get(url('/api/customers/32'), writer)).headers['etag']);
    const res = await send(url('/api/customers/32'), 'PATCH', { ...writer, ...mergePatch, 'if-match': `W/${etag}` }, '{"name":"After"}');
    assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
    assert.deepEqual(writesSent(), []);
  });

  test('weak tags in a list are passed over: a strong one beside them decides, and only it is sent', async () => {
    fx.upstream.on('GET /customers/33', { kind: 'json', body: { id: 33, name: 'Before', status: 'active' }, headers: { etag: '"v3"' } });
    const etag = String((await get(url('/api/customers/33'), writer)).headers['etag']);
    fx.upstream.on('PATCH /customers/33', { kind: 'json', body: { id: 33, name: 'After', status: 'active' }, headers: { etag: '"v4"' } });
    const res = await send(url('/api/customers/33'), 'PATCH', { ...writer, ...mergePatch, 'if-match': `W/"v1.abcdefgh", ${etag}` }, '{"name":"After"}');
    assert.equal(res.status, 200, res.text);
    const sent = fx.upstream.headersSeen[fx.upstream.requests.findIndex((r) => r.method === 'PATCH')] ?? {};
    assert.equal(sent['if-match'], '"v3"');
  });

  test('a weak ETag the gateway served (the upstream validator was weak) does not match If-Match on a write either; * does', async () => {
    fx.upstream.on('GET /customers/34', { kind: 'json', body: { id: 34, name: 'Before', status: 'active' }, headers: { etag: 'W/"w1"' } });
    const etag = String((await get(url('/api/customers/34'), writer)).headers['etag']);
    assert.match(etag, /^W\//);
    const res = await send(url('/api/customers/34'), 'PATCH', { ...writer, ...mergePatch, 'if-match': etag }, '{"name":"After"}');
    assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
    assert.deepEqual(writesSent(), []);
    fx.upstream.on('PATCH /customers/34', { kind: 'json', body: { id: 34, name: 'After', status: 'active' } });
    assert.equal((await send(url('/api/customers/34'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"name":"After"}')).status, 200);
  });
});
