import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

type Operation = {
  operationId: string;
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  security: Record<string, string[]>[];
  responses: Record<string, { description: string }>;
};
type Doc = { paths: Record<string, Record<string, Operation>> };

describe('the OpenAPI document lists pass-through routes', () => {
  let fx: Fixture;
  let doc: Doc;

  before(async () => {
    fx = await startFixture({
      upstreams: { files: { url: 'http://127.0.0.1:9' } },
      routes: {
        files: { path: '/api/files/{path*}', methods: ['GET', 'PUT'], service: 'files', upstream: '/files/{path*}', scope: 'files:read', public: true },
        socket: { path: '/api/ws/{room}', service: 'files', upstream: '/ws/{room}', websocket: true },
      },
    });
    const res = await get(`${fx.gw.url}/api/openapi.json`, bearer(await fx.token()));
    assert.equal(res.status, 200);
    doc = res.json() as Doc;
  });
  after(() => fx.close());

  test('the document stays valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
  });

  test("each route under its template with every method, its parameters, security and the upstream's answer as the default", () => {
    const files = doc.paths['/api/files/{path}'];
    // OPTIONS is the dispatcher's, on every path (204 with Allow), not the route's.
    assert.deepEqual(Object.keys(files ?? {}).sort(), ['get', 'head', 'options', 'put']);
    const read = files?.['get'] as Operation;
    assert.deepEqual(
      read.parameters?.map((p) => [p.name, p.in, p.required]),
      [['path', 'path', true]],
    );
    assert.deepEqual(read.security, [{}, { bearerAuth: ['files:read'] }], 'a public read may go without credentials');
    assert.match(read.responses['default']?.description ?? '', /upstream/);
    assert.equal(read.responses['200'], undefined, "the status is the upstream's");
    assert.equal(read.responses['406'], undefined, 'Accept goes to the upstream');
    assert.ok(read.responses['504'] && read.responses['502'] && read.responses['503'] && read.responses['401']);
    const write = files?.['put'] as Operation;
    assert.deepEqual(write.security, [{ bearerAuth: ['files:read'] }], "a public route's writes need the token");
    assert.ok(write.requestBody?.content['*/*']);
    assert.equal(
      new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId))).size,
      Object.values(doc.paths).flatMap((ops) => Object.values(ops)).length,
      'operation ids are unique',
    );
  });

  test('a WebSocket route says it switches protocols', () => {
    const open = doc.paths['/api/ws/{room}']?.['get'];
    assert.ok(open?.responses['101']);
    assert.deepEqual(open?.security, [{ bearerAuth: ['customers:read'] }]);
  });
});
