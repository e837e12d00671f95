import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bearer, get } from '../helpers/gateway.ts';
import { assertProblem, assertStillServes, suiteFixture, rawAnswer } from '../helpers/hostile.ts';

/** Each route of the shipped config with the methods it takes (customers take writes: docs/writes.md). */
const ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/api': ['GET', 'HEAD'],
  '/api/customers': ['GET', 'HEAD', 'POST'],
  '/api/customers/1': ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'],
  '/api/customers/1/orders': ['GET', 'HEAD'],
  '/api/customers/1/orders/101': ['GET', 'HEAD'],
  '/api/openapi.json': ['GET', 'HEAD'],
};
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE'];

/** Hostile input catalogue, part 4: every method on every route, and Accept variants. */
describe('hostile input: methods and Accept', () => {
  const w = suiteFixture();

  for (const [path, allowed] of Object.entries(ROUTES)) {
    for (const method of METHODS.filter((m) => !allowed.includes(m))) {
      test(`${method} ${path} is 405 with Allow: ${allowed.join(', ')}`, async () => {
        const answer = await rawAnswer(w.fx.gw.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.token}\r\nConnection: close\r\n\r\n`);
        assertProblem(answer, { status: 405, code: 'HG_ERR_METHOD_NOT_ALLOWED', headers: { allow: allowed.join(', ') } });
        await assertStillServes(w.fx.gw.url, w.token);
      });
    }
    // CORS is off (the default): OPTIONS is answered for itself (RFC 9110 section 9.3.7).
    test(`OPTIONS ${path} is 204 with Allow: ${allowed.join(', ')}`, async () => {
      const answer = await rawAnswer(w.fx.gw.port, `OPTIONS ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(answer.status, 204);
      assert.equal(answer.headers['allow'], allowed.join(', '));
      assert.equal(answer.text, '');
      await assertStillServes(w.fx.gw.url, w.token);
    });
  }

  test('a method no route has on an unknown path is 404, not 405 (there is nothing to allow)', async () => {
    const answer = await rawAnswer(w.fx.gw.port, `DELETE /api/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assertProblem(answer, { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
    assert.equal(answer.headers['allow'], undefined);
  });

  // A segment that does not fit its parameter's type is no resource, whatever the method: GET
  // says 404, so OPTIONS, POST or TRACE must not advertise methods for it (204/405 with an Allow).
  // PUT and DELETE on an unfit item already reached the write handler's own 404; they guard it.
  for (const path of ['/api/customers/abc', '/api/customers/0', '/api/customers/01', '/api/customers/abc/orders', '/api/customers/1/orders/x']) {
    for (const method of ['OPTIONS', 'PUT', 'DELETE', 'POST', 'TRACE']) {
      test(`${method} ${path} is 404 like its GET, without Allow`, async () => {
        const answer = await rawAnswer(w.fx.gw.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.token}\r\nConnection: close\r\n\r\n`);
        assertProblem(answer, { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
        assert.equal(answer.headers['allow'], undefined);
      });
    }
  }

  const notAcceptable = { status: 406, code: 'HG_ERR_NOT_ACCEPTABLE' } as const;
  // [name, path, Accept]
  const refused: Array<[string, string, string]> = [
    ['HTML', '/api/customers/1', 'text/html'],
    ['XML', '/api/customers/1', 'application/xml'],
    ['any image', '/api/customers/1', 'image/*'],
    ['any text', '/api/customers/1', 'text/*'],
    ['JSON explicitly refused (q=0)', '/api/customers/1', 'application/json;q=0'],
    ['everything refused (*/*;q=0)', '/api/customers/1', '*/*;q=0'],
    ['both formats refused', '/api/customers/1', 'application/json;q=0, application/hal+json;q=0'],
    ['a malformed qvalue', '/api/customers/1', 'application/json;q=abc'],
    ['a qvalue above 1', '/api/customers/1', 'application/json;q=1.5'],
    ['garbage', '/api/customers/1', ';;;'],
    ['500 media ranges, none ours', '/api/customers/1', Array.from({ length: 500 }, (_, i) => `text/x-${i}`).join(', ')],
    ['HAL for the OpenAPI document (JSON only)', '/api/openapi.json', 'application/hal+json'],
    ['HTML for the collection', '/api/customers', 'text/html'],
    ['HTML for the orders', '/api/customers/1/orders', 'text/html'],
  ];
  for (const [name, path, accept] of refused) {
    test(`Accept ${name} on ${path} is 406`, async () => {
      assertProblem(await get(`${w.fx.gw.url}${path}`, { ...bearer(w.token), accept }), notAcceptable);
      await assertStillServes(w.fx.gw.url, w.token);
    });
  }

  // [Accept, the format it gets]
  const accepted: Array<[string, string]> = [
    ['application/*', 'application/json'],
    ['APPLICATION/JSON', 'application/json'],
    ['application/json;charset=utf-8', 'application/json'],
    ['application/hal+json', 'application/hal+json'],
    ['application/hal+json;q=0.5, application/json;q=0.4', 'application/hal+json'],
  ];
  for (const [accept, type] of accepted) {
    test(`Accept ${accept} is served as ${type} (control)`, async () => {
      const res = await get(`${w.fx.gw.url}/api/customers/1`, { ...bearer(w.token), accept });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], type);
    });
  }
});
