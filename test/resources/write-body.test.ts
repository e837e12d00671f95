import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, send } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };

/** A field value of `depth` nested arrays around 1, as JSON text. */
function nested(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

describe("a write's body as the gateway checks it before anything is sent", () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;
  const writesSent = (): unknown[] => fx.upstream.requests.filter((r) => r.method !== 'GET');

  before(async () => {
    fx = await startFixture({ resources: { customers: { exposeFields: ['notes'] } } });
    writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  // Regression: a 30,000-deep body passed every check and was sent on, and crashed the upstream.
  test('a body nested deeper than server.maxBodyDepth (64) is a 400 naming the bound, and nothing is sent', async () => {
    for (const depth of [64, 30_000]) {
      const res = await send(url('/api/customers'), 'POST', { ...writer, ...json }, `{"name":"N","status":"active","notes":${nested(depth)}}`);
      assertProblem(res, { status: 400, code: 'HG_ERR_INVALID_BODY' });
      assert.match((res.json() as { detail: string }).detail, /nested deeper than 64 levels \(server\.maxBodyDepth\)/);
    }
    const patch = await send(url('/api/customers/5'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, `{"notes":{"a":${nested(70)}}}`);
    assertProblem(patch, { status: 400, code: 'HG_ERR_INVALID_BODY' });
    assert.deepEqual(writesSent(), []);
  });

  test('a body exactly at server.maxBodyDepth is sent as it came', async () => {
    // The object is level 1, so the field may hold 63 levels.
    const body = `{"name":"N","status":"active","notes":${nested(63)}}`;
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 900, name: 'N', status: 'active' } });
    const res = await send(url('/api/customers'), 'POST', { ...writer, ...json }, body);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(writesSent(), [{ method: 'POST', path: '/customers', body }]);
  });

  test('server.maxBodyDepth is a setting', async () => {
    const shallow = await startFixture({ server: { maxBodyDepth: 2 }, resources: { customers: { exposeFields: ['notes'] } } });
    after(() => shallow.close());
    const token = bearer(await shallow.token({ claims: { scope: 'customers:read customers:write' } }));
    const res = await send(`${shallow.gw.url}/api/customers`, 'POST', { ...token, ...json }, '{"name":"N","status":"active","notes":[[1]]}');
    assertProblem(res, { status: 400, code: 'HG_ERR_INVALID_BODY' });
    assert.match((res.json() as { detail: string }).detail, /deeper than 2 levels/);
    assert.deepEqual(shallow.upstream.requests, []);
  });

  // Regression: "\ud800" (an escaped lone surrogate) passed and was sent on; I-JSON (RFC 7493
  // section 2.1) forbids it, and it is no Unicode character, so no UTF-8 upstream can read it.
  test('a string holding a lone surrogate, in a value or a member name, is a 422 pointing at it', async () => {
    const cases: [string, string][] = [
      ['{"name":"\\ud800","status":"active"}', '/name'],
      ['{"name":"ok \\uDFFF","status":"active"}', '/name'],
      ['{"name":"N","status":"active","notes":["x",{"\\udc00":1}]}', '/notes/1'],
      ['{"name":"\\ud800\\u0041","status":"active"}', '/name'],
    ];
    for (const [body, pointer] of cases) {
      const res = await send(url('/api/customers'), 'POST', { ...writer, ...json }, body);
      assertProblem(res, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      const errors = (res.json() as { errors: { pointer: string; detail: string }[] }).errors;
      assert.equal(errors.length, 1, body);
      assert.equal(errors[0]?.pointer, pointer, body);
      assert.match(errors[0]?.detail ?? '', /lone surrogate/);
    }
    assert.deepEqual(writesSent(), []);
  });

  test('a surrogate pair, escaped or as UTF-8, is a character like any other and is sent', async () => {
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'N', status: 'active' } });
    for (const body of ['{"name":"\\ud83d\\ude00","status":"active"}', '{"name":"😀 \\\\ud800","status":"active"}']) {
      const res = await send(url('/api/customers'), 'POST', { ...writer, ...json }, body);
      assert.equal(res.status, 201, `${body}: ${res.text}`);
    }
    assert.equal(writesSent().length, 2);
  });
});
