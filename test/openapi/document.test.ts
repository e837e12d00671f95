import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

/** The value at this path of keys in parsed JSON, or undefined. */
function dig(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const keys = (value: unknown): string[] => (typeof value === 'object' && value !== null ? Object.keys(value) : []);

/** What a consumer's tooling (validators, a response-validating proxy, client generators) reads in the shipped document. */
describe("the OpenAPI document against a consumer's tooling", () => {
  let fx: Fixture;
  let doc: unknown;
  const op = (path: string, method: string, ...rest: string[]): unknown => dig(doc, 'paths', path, method, ...rest);
  const requestSchema = (method: string, path: string, type: string, ...rest: string[]): unknown =>
    op(path, method, 'requestBody', 'content', type, 'schema', ...rest);
  const enumOf = (path: string, method: string, status: string, member: string): unknown[] =>
    list(op(path, method, 'responses', status, 'content', 'application/problem+json', 'schema', 'allOf', '1', 'properties', member, 'enum'));

  before(async () => {
    fx = await startFixture();
    doc = (await get(`${fx.gw.url}/api/openapi.json`, bearer(await fx.token()))).json();
  });
  after(() => fx.close());

  test('the problem enums include what is answered: customer-not-found for the orders of a missing customer, bad-request on every read', () => {
    assert.ok(enumOf('/api/customers/{customerId}/orders', 'get', '404', 'type').includes('urn:hypergate:problem:customer-not-found'));
    assert.ok(enumOf('/api/customers/{customerId}/orders', 'get', '404', 'code').includes('HG_ERR_CUSTOMER_NOT_FOUND'));
    for (const path of keys(dig(doc, 'paths'))) {
      for (const method of ['get', 'head']) assert.ok(enumOf(path, method, '400', 'code').includes('HG_ERR_BAD_REQUEST'), `${method} ${path}`);
    }
  });

  test('POST and PUT bodies require the declared fields, and POST has no id to write; a PATCH requires nothing', () => {
    assert.deepEqual(requestSchema('post', '/api/customers', 'application/json', 'required'), ['name', 'status']);
    assert.equal(requestSchema('post', '/api/customers', 'application/json', 'properties', 'id'), undefined);
    assert.equal(requestSchema('post', '/api/customers', 'application/json', 'additionalProperties'), false);
    assert.deepEqual(requestSchema('put', '/api/customers/{id}', 'application/json', 'required'), ['name', 'status']);
    assert.equal(requestSchema('patch', '/api/customers/{id}', 'application/merge-patch+json', 'required'), undefined);
  });

  test('a POST that names the new id is a 422 that says why, and nothing is sent', async () => {
    const writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
    fx.upstream.reset();
    const res = await send(`${fx.gw.url}/api/customers`, 'POST', { ...writer, 'content-type': 'application/json' }, '{"id":5,"name":"N","status":"active"}');
    assertProblem(res, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    assert.deepEqual(
      (JSON.parse(res.text) as { errors: { pointer: string }[] }).errors.map((e) => e.pointer),
      ['/id'],
    );
    assert.deepEqual(fx.upstream.requests, []);
  });

  test('headers every such answer carries are required: ETag on reads and writes, Location on 201, Retry-After on 503, Allow on OPTIONS and 405, the challenge on 401', () => {
    const required = (path: string, method: string, status: string, header: string): unknown =>
      op(path, method, 'responses', status, 'headers', header, 'required');
    for (const name of ['ETag', 'Cache-Control', 'Age', 'Cache-Status', 'Vary', 'X-Request-Id'])
      assert.equal(required('/api/customers/{id}', 'get', '200', name), true, name);
    assert.equal(required('/api/customers/{id}', 'get', '304', 'ETag'), true);
    assert.equal(required('/api/customers/{id}', 'get', '503', 'Retry-After'), true);
    assert.equal(required('/api/customers/{id}', 'get', '401', 'WWW-Authenticate'), true);
    for (const name of ['Location', 'ETag', 'Content-Location']) assert.equal(required('/api/customers', 'post', '201', name), true, name);
    assert.equal(required('/api/customers/{id}', 'put', '200', 'ETag'), true);
    assert.equal(required('/api/customers/{id}', 'options', '204', 'Allow'), true);
    assert.equal(required('/api/customers', 'options', '204', 'Accept-Post'), true);
    assert.equal(dig(doc, 'components', 'responses', 'MethodNotAllowed', 'headers', 'Allow', 'required'), true);
  });

  test('writes document their conditions: If-Match (required but for a create-only PUT), If-None-Match, If-Unmodified-Since', () => {
    const names = (method: string): Record<string, unknown> =>
      Object.fromEntries(
        list(op('/api/customers/{id}', method, 'parameters'))
          .filter((p) => dig(p, 'in') === 'header')
          .map((p) => [String(dig(p, 'name')), dig(p, 'required')]),
      );
    assert.deepEqual(names('put'), { 'If-Match': false, 'If-None-Match': false, 'If-Unmodified-Since': false });
    assert.deepEqual(names('patch'), { 'If-Match': true, 'If-None-Match': false, 'If-Unmodified-Since': false, 'Idempotency-Key': false });
    assert.ok(op('/api/customers/{id}', 'put', 'responses', '412'));
    assert.ok(op('/api/customers', 'post', 'responses', '412'), 'an upstream may refuse a POST with 412');
  });

  test("the OpenApiDocument schema defines what it requires, and the server's own document matches it", () => {
    const schema = dig(doc, 'components', 'schemas', 'OpenApiDocument') as Record<string, unknown>;
    for (const name of list(schema['required'])) assert.ok(dig(schema, 'properties', String(name)), String(name));
    const check = new Ajv2020({ strict: false }).compile(schema);
    assert.equal(check(doc), true, JSON.stringify(check.errors));
  });

  test('every field of the shipped resources has a type, the Problem schema has the 422 errors array, and servers is set', () => {
    for (const name of ['Customer', 'Order']) {
      const properties = dig(doc, 'components', 'schemas', name, 'properties');
      for (const field of keys(properties)) assert.ok(dig(properties, field, 'type') !== undefined || field === 'links', `${name}.${field}`);
    }
    assert.deepEqual(dig(doc, 'components', 'schemas', 'Order', 'properties', 'total'), { type: 'number' });
    assert.deepEqual(dig(doc, 'components', 'schemas', 'Problem', 'properties', 'errors', 'items', 'required'), ['pointer', 'detail']);
    assert.deepEqual(dig(doc, 'servers'), [{ url: '/', description: 'The gateway that served this document.' }]);
  });
});
