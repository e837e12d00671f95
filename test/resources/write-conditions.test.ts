import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { defaultRecord } from '../helpers/upstream.ts';

const WRITE = 'customers:read customers:write';
const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };
const replacement = '{"name":"Created","status":"active"}';

/** The headers of the requests with this method the upstream received. */
function sentWith(fx: Fixture, method: string): Record<string, string | string[] | undefined>[] {
  return fx.upstream.requests.flatMap((r, i) => (r.method === method ? [fx.upstream.headersSeen[i] ?? {}] : []));
}

describe('If-None-Match on a write (RFC 9110 section 13.1.2), with If-Match required as shipped', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;

  before(async () => {
    fx = await startFixture();
    writer = bearer(await fx.token({ claims: { scope: WRITE } }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test('a create-only PUT (If-None-Match: *) of an existing customer is a 412, and nothing is written', async () => {
    const res = await send(url('/api/customers/5'), 'PUT', { ...writer, ...json, 'if-none-match': '*' }, replacement);
    assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
    assert.match(problemDetail(res.text), /If-None-Match/);
    assert.deepEqual(sentWith(fx, 'PUT'), []);
  });

  test('a create-only PUT of a missing customer is sent with If-None-Match: *, so the upstream decides atomically', async () => {
    fx.upstream.on('GET /customers/700', { kind: 'json', status: 404, body: { error: 'not found' } });
    fx.upstream.on('PUT /customers/700', { kind: 'json', status: 201, body: { id: 700, name: 'Created', status: 'active' } });
    const res = await send(url('/api/customers/700'), 'PUT', { ...writer, ...json, 'if-none-match': '*' }, replacement);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['location'], '/api/customers/700');
    const [put] = sentWith(fx, 'PUT');
    assert.equal(put?.['if-none-match'], '*');
    assert.equal(put?.['if-match'], undefined);
  });

  test("the upstream's 412 to the forwarded If-None-Match (it created the item meanwhile) is a 412", async () => {
    fx.upstream.on('GET /customers/701', { kind: 'json', status: 404, body: { error: 'not found' } });
    fx.upstream.on('PUT /customers/701', { kind: 'json', status: 412, body: { error: 'exists' } });
    const res = await send(url('/api/customers/701'), 'PUT', { ...writer, ...json, 'if-none-match': '*' }, replacement);
    assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
  });

  test('a malformed If-None-Match on a write is a 400 and nothing is sent', async () => {
    const res = await send(url('/api/customers/5'), 'PUT', { ...writer, ...json, 'if-match': '"x"', 'if-none-match': 'v1' }, replacement);
    assertProblem(res, { status: 400, code: 'HG_ERR_BAD_REQUEST' });
    assert.deepEqual(fx.upstream.requests, []);
  });
});

describe('If-None-Match with entity-tags and If-Unmodified-Since on writes (RFC 9110 sections 13.1.2 and 13.1.4)', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  let reader: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;

  before(async () => {
    fx = await startFixture({ resources: { customers: { requireIfMatch: false } } });
    writer = bearer(await fx.token({ claims: { scope: WRITE } }));
    reader = bearer(await fx.token());
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  test("If-None-Match with an ETag the gateway served reaches the upstream as the upstream's own tag", async () => {
    fx.upstream.on('GET /customers/9', { kind: 'json', body: defaultRecord(9), headers: { etag: '"v3"' } });
    const read = await get(url('/api/customers/9'), reader);
    const ours = String(read.headers['etag']);
    assert.match(ours, /^"v3\..{8}"$/);
    const res = await send(url('/api/customers/9'), 'PATCH', { ...writer, ...mergePatch, 'if-none-match': `W/${ours}` }, '{"name":"N"}');
    assert.equal(res.status, 200, res.text);
    assert.equal(sentWith(fx, 'PATCH')[0]?.['if-none-match'], 'W/"v3"');
  });

  test('If-None-Match naming the current version by its body digest is a 412 before anything is sent', async () => {
    const read = await get(url('/api/customers/11'), reader);
    const res = await send(url('/api/customers/11'), 'PATCH', { ...writer, ...mergePatch, 'if-none-match': String(read.headers['etag']) }, '{"name":"N"}');
    assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
    assert.deepEqual(sentWith(fx, 'PATCH'), []);
  });

  test('If-Unmodified-Since without If-Match reaches the upstream as an IMF-fixdate, which decides with its own Last-Modified', async () => {
    fx.upstream.on('PUT /customers/12', { kind: 'json', status: 412, body: { error: 'modified since' } });
    const res = await send(url('/api/customers/12'), 'PUT', { ...writer, ...json, 'if-unmodified-since': 'Sunday, 06-Nov-94 08:49:37 GMT' }, replacement);
    assertProblem(res, { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
    assert.equal(sentWith(fx, 'PUT')[0]?.['if-unmodified-since'], 'Sun, 06 Nov 1994 08:49:37 GMT');
  });

  test('If-Unmodified-Since is ignored with If-Match, and when it is not one HTTP-date', async () => {
    const date = 'Sun, 06 Nov 1994 08:49:37 GMT';
    await send(url('/api/customers/13'), 'DELETE', { ...writer, 'if-match': '*', 'if-unmodified-since': date });
    await send(url('/api/customers/14'), 'DELETE', { ...writer, 'if-unmodified-since': `${date}, ${date}` });
    await send(url('/api/customers/15'), 'DELETE', { ...writer, 'if-unmodified-since': 'yesterday' });
    const deletes = sentWith(fx, 'DELETE');
    assert.equal(deletes.length, 3);
    for (const headers of deletes) assert.equal(headers['if-unmodified-since'], undefined);
    assert.equal(deletes[0]?.['if-match'], '*');
  });

  test('POST passes If-None-Match and If-Unmodified-Since on to the collection', async () => {
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'N', status: 'active' } });
    const res = await send(
      url('/api/customers'),
      'POST',
      { ...writer, ...json, 'if-none-match': '*', 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' },
      '{"name":"N","status":"active"}',
    );
    assert.equal(res.status, 201, res.text);
    const [post] = sentWith(fx, 'POST');
    assert.equal(post?.['if-none-match'], '*');
    assert.equal(post?.['if-unmodified-since'], 'Sun, 06 Nov 1994 08:49:37 GMT');
  });
});

function problemDetail(text: string): string {
  return (JSON.parse(text) as { detail: string }).detail;
}
