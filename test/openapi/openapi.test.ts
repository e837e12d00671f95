import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERRORS, PROBLEM_TYPE_BASE } from '../../src/lib/errors.ts';
import { generateOpenApi, openApiPath } from '../../src/openapi/generate.ts';
import { notFoundIdentity } from '../../src/resources/naming.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

const info = { title: 't', version: '1', requiredScope: 'a', readAnyScope: 'b' };

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: { name: string; in: string }[];
        security: Record<string, string[]>[];
        responses: Record<string, { description: string; content?: Record<string, unknown> }>;
      }
    >
  >;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
};

describe('GET /api/openapi.json', () => {
  let fx: Fixture;
  let doc: Doc;
  let text: string;
  before(async () => {
    fx = await startFixture({ auth: { ownerClaim: 'customer_id' } });
    const res = await get(`${fx.gw.url}/api/openapi.json`, bearer(await fx.token()));
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    text = res.text;
    doc = res.json() as Doc;
  });
  after(() => fx.close());

  test('the document is valid OpenAPI 3.1 according to a real validator', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
  });

  test('the validator does reject a broken document (so the check above means something)', async () => {
    const broken = structuredClone<Doc>(doc);
    const op = broken.paths['/api']?.['get'] as unknown as Record<string, unknown>;
    op['responses'] = 'none';
    const result = await new Validator().validate(broken);
    assert.equal(result.valid, false);
  });

  test('a route without a doc cannot be described', () => {
    assert.throws(() => generateOpenApi([{ method: 'GET', path: '/x', handler: () => {} }], info), /has no doc/);
    const doc0 = fx.gw.gateway.routes[0]?.doc;
    assert.ok(doc0);
    assert.throws(() => generateOpenApi([{ method: 'POST', path: '/x', handler: () => {}, doc: doc0 }], info), /only reads and writes are described/);
  });

  test('it describes exactly the routes the router knows, method by method, and OPTIONS on each path', () => {
    const fromRouter = fx.gw.gateway.routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
    // OPTIONS is answered by the dispatcher on every path, not by a route.
    const fromDoc = Object.entries(doc.paths)
      .flatMap(([path, ops]) =>
        Object.keys(ops)
          .filter((m) => m !== 'options')
          .map((m) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    assert.deepEqual(fromDoc, fromRouter);
    for (const [path, ops] of Object.entries(doc.paths)) assert.ok(ops['options'], `OPTIONS ${path}`);
    for (const route of fx.gw.gateway.routes) assert.ok(route.doc, `${route.method} ${route.path} has a doc`);
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/api',
      '/api/customers',
      '/api/customers/{customerId}/orders',
      '/api/customers/{customerId}/orders/{id}',
      '/api/customers/{id}',
      '/api/openapi.json',
    ]);
  });

  test('every route names its parameters, its scopes and a bearer security scheme', () => {
    assert.deepEqual(doc.components.securitySchemes['bearerAuth'], { ...doc.components.securitySchemes['bearerAuth'], type: 'http', scheme: 'bearer' });
    const order = doc.paths['/api/customers/{customerId}/orders/{id}']?.['get'];
    // Every read is conditional (RFC 9110 sections 13.1.1 and 13.1.2): If-None-Match and If-Match follow the route's own.
    assert.deepEqual(
      order?.parameters?.map((p) => `${p.in}:${p.name}`),
      ['path:customerId', 'path:id', 'header:If-None-Match', 'header:If-Match'],
    );
    const list = doc.paths['/api/customers']?.['get'];
    assert.deepEqual(
      list?.parameters?.map((p) => `${p.in}:${p.name}`),
      ['query:offset', 'query:limit', 'header:If-None-Match', 'header:If-Match'],
    );
    // Ownership is on in this gateway: the collection needs both scopes.
    assert.deepEqual(list?.security, [{ bearerAuth: ['customers:read', 'customers:read:any'] }]);
    // Reads need the read scope, writes (docs/writes.md) the write scope.
    for (const ops of Object.values(doc.paths)) {
      // OPTIONS needs no token.
      for (const [method, op] of Object.entries(ops)) {
        if (method === 'options') assert.deepEqual(op.security, []);
        else assert.deepEqual(op.security[0]?.['bearerAuth']?.[0], method === 'get' || method === 'head' ? 'customers:read' : 'customers:write', method);
      }
    }
  });

  test('responses list their problem types, and GET answers in JSON and HAL', () => {
    const customer = doc.paths['/api/customers/{id}']?.['get'];
    assert.ok(customer);
    assert.deepEqual(Object.keys(customer.responses['200']?.content ?? {}), ['application/json', 'application/hal+json']);
    const customerNotFound = { ...notFoundIdentity('customer'), status: 404 };
    for (const code of [
      'HG_ERR_CUSTOMER_NOT_FOUND',
      'HG_ERR_NOT_OWNER',
      'HG_ERR_AUTH_MISSING',
      'HG_ERR_UPSTREAM_TIMEOUT',
      'HG_ERR_NOT_ACCEPTABLE',
      'HG_ERR_PRECONDITION_FAILED',
    ] as const) {
      const def = code === 'HG_ERR_CUSTOMER_NOT_FOUND' ? customerNotFound : ERRORS[code];
      const response = customer.responses[String(def.status)];
      assert.ok(response, code);
      assert.ok(response.description.includes(`${PROBLEM_TYPE_BASE}${def.slug}`), code);
      assert.ok(response.content?.['application/problem+json'], code);
    }
    assert.ok(doc.paths['/api/customers']?.['get']?.responses['400']?.description.includes('invalid-query-parameter'));
    assert.equal(doc.paths['/api/customers/{id}']?.['head']?.responses['200']?.content, undefined);
  });

  test('the document is cached and served the same twice', async () => {
    const again = await get(`${fx.gw.url}/api/openapi.json`, bearer(await fx.token()));
    assert.equal(again.text, text);
  });
});
