import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ContractDocument, documentedStatuses, recordAnswer, stopWatching, watchAnswers, type RecordedAnswer } from '../helpers/contract.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { rawAnswer } from '../helpers/hostile.ts';

/**
 * Statuses no request can bring about without breaking the gateway itself: a 500 is an
 * unexpected failure (it is logged and the process keeps serving).
 */
const UNPROVOKED = new Set(['500']);

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };

/** Requests covering every documented operation and status; each answer is checked against the document. */
async function exercise(fx: Fixture): Promise<void> {
  const url = (path: string): string => `${fx.gw.url}${path}`;
  const reader = bearer(await fx.token({ claims: { scope: 'customers:read customers:read:any' } }));
  const writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:read:any customers:write' } }));
  const own = bearer(await fx.token({ claims: { scope: 'customers:read', customer_id: 2 } }));
  const reads = ['/api', '/api/openapi.json', '/api/customers', '/api/customers/1', '/api/customers/1/orders', '/api/customers/1/orders/101'];
  for (const path of reads) {
    for (const method of ['GET', 'HEAD', 'OPTIONS'] as const) await get(url(path), reader, method);
    await get(url(path), { ...reader, accept: 'application/hal+json' });
  }
  const read = await get(url('/api/customers/1'), reader);
  const etag = String(read.headers['etag']);
  await get(url('/api/customers/1'), { ...reader, 'if-none-match': etag }); // 304
  await get(url('/api/customers/1'), { ...reader, 'if-match': '"other"' }); // 412
  await get(url('/api/customers/1'), { ...reader, 'if-match': 'not-a-tag' }); // 400 bad-request
  await get(url('/api/customers?limit=500'), reader); // 400 invalid-query-parameter
  await get(url('/api/customers/1'), { authorization: 'Basic x' }); // 400 invalid-request
  await get(url('/api/customers/1')); // 401
  await get(url('/api/customers/1'), bearer('not.a.token')); // 401 invalid-token
  await get(url('/api/customers/1'), bearer(await fx.token({ claims: { scope: 'other' } }))); // 403 insufficient-scope
  await get(url('/api/customers/1'), own); // 403 not-owner
  await get(url('/api/customers/2000000'), reader); // 404 customer-not-found
  await get(url('/api/customers/2000000/orders'), reader); // 404 customer-not-found, for orders
  await get(url('/api/customers/1/orders/999'), reader); // 404 order-not-found
  await get(url('/api/customers/abc'), reader); // 404 not-found
  await get(url('/api/nothing-here'), reader); // 404, no path
  await send(url('/api/customers/1/orders'), 'POST', { ...writer, ...json }, '{}'); // 405
  await get(url('/api/customers/1'), { ...reader, accept: 'text/plain' }); // 406
  await get(url(`/api/customers/1?${'x'.repeat(9000)}`), reader); // 414
  const many: Record<string, string> = { ...reader };
  for (let i = 0; i < 120; i++) many[`x-filler-${i}`] = 'y';
  await get(url('/api/customers/1'), many); // 431
  fx.upstream.on('/customers/77', { kind: 'raw', status: 200, body: 'not json', headers: { 'content-type': 'application/json' } });
  await get(url('/api/customers/77'), reader); // 502
  fx.upstream.on('/customers/78', { kind: 'hang' });
  await get(url('/api/customers/78'), reader); // 504

  // Writes.
  fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 900, name: 'New', status: 'active' }, headers: { etag: '"v1"' } });
  await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"New","status":"active"}'); // 201
  await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"id":5,"name":"New","status":"active"}'); // 422: the id is the upstream's
  await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"New","status":"active","colour":"red"}'); // 422 with errors
  await send(url('/api/customers'), 'POST', { ...writer, 'content-type': 'text/plain' }, 'x'); // 415
  await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":'); // 400 invalid-body
  await send(url('/api/customers'), 'POST', { ...writer, ...json }, `{"name":"${'x'.repeat(70_000)}"}`); // 413
  // 501: a transfer coding other than chunked (undici will not send one, so the request is written by hand).
  const coded = await rawAnswer(
    fx.gw.port,
    `POST /api/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${writer['authorization']}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
  );
  recordAnswer(url('/api/customers'), 'POST', coded);
  await send(url('/api/customers/3'), 'PUT', { ...writer, ...json }, '{"name":"N","status":"active"}'); // 428
  const current = String((await get(url('/api/customers/3'), reader)).headers['etag']);
  await send(url('/api/customers/3'), 'PUT', { ...writer, ...json, 'if-match': current }, '{"name":"N","status":"active"}'); // 200
  await send(url('/api/customers/3'), 'PATCH', { ...writer, ...mergePatch, 'if-match': current }, '{"name":"P"}'); // 200
  await send(url('/api/customers/3'), 'PUT', { ...writer, ...json, 'if-none-match': '*' }, '{"name":"N","status":"active"}'); // 412
  fx.upstream.on('GET /customers/700', { kind: 'json', status: 404, body: {} });
  fx.upstream.on('PUT /customers/700', { kind: 'json', status: 201, body: { id: 700, name: 'N', status: 'active' } });
  await send(url('/api/customers/700'), 'PUT', { ...writer, ...json, 'if-none-match': '*' }, '{"name":"N","status":"active"}'); // 201
  fx.upstream.on('PUT /customers/4', { kind: 'json', status: 409, body: {} });
  await send(url('/api/customers/4'), 'PUT', { ...writer, ...json, 'if-match': '*' }, '{"name":"N","status":"active"}'); // 409
  fx.upstream.on('PATCH /customers/6', { kind: 'raw', status: 204, body: '' });
  await send(url('/api/customers/6'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"name":"P"}'); // 204
  fx.upstream.on('PUT /customers/8', { kind: 'json', status: 404, body: {} });
  await send(url('/api/customers/8'), 'PUT', { ...writer, ...json, 'if-match': '*' }, '{"name":"N","status":"active"}'); // 404 customer-not-found
  fx.upstream.on('DELETE /customers/9', { kind: 'raw', status: 204, body: '' });
  await send(url('/api/customers/9'), 'DELETE', { ...writer, 'if-match': '*' }); // 204
  // The breaker opens after five failures: 503 with Retry-After, last, as it pauses the service.
  fx.upstream.on('GET /customers/79', { kind: 'raw', status: 500, body: 'down' });
  for (let i = 0; i < 6; i++) await get(url('/api/customers/79'), reader);
}

describe('every answer matches the OpenAPI document (status, media type, body, documented headers)', () => {
  let fx: Fixture;
  let document: ContractDocument;
  let answers: RecordedAnswer[];

  before(async () => {
    fx = await startFixture({ auth: { ownerClaim: 'customer_id' }, upstream: { timeoutMs: 300 } });
    const res = await get(`${fx.gw.url}/api/openapi.json`, bearer(await fx.token()));
    document = new ContractDocument(res.json() as Record<string, unknown>);
    watchAnswers(fx.gw.url);
    await exercise(fx);
    answers = stopWatching(fx.gw.url);
  });
  after(() => fx.close());

  test('the served document is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(document.doc));
    assert.deepEqual(result.errors, undefined);
  });

  test('each answer is one the document describes', () => {
    const problems = answers.flatMap((a) => document.problemsOf(a));
    assert.deepEqual(problems, []);
  });

  test('the answers cover every documented operation and every documented status', () => {
    const seen = new Set<string>();
    const statuses = new Set<string>();
    for (const answer of answers) {
      const found = document.responseFor(answer);
      if (typeof found === 'string') continue;
      seen.add(found.operation);
      statuses.add(String(answer.status));
    }
    const documented = documentedStatuses(document.doc);
    assert.deepEqual(
      [...documented.keys()].filter((op) => !seen.has(op)),
      [],
    );
    const all = new Set([...documented.values()].flat());
    assert.deepEqual([...all].filter((s) => !statuses.has(s) && !UNPROVOKED.has(s)).sort(), []);
  });
});

describe('a rate-limited gateway documents its 429, and answers as documented', () => {
  let fx: Fixture;

  before(async () => {
    fx = await startFixture({ rateLimit: { requestsPerSecond: 1, burst: 2 } });
  });
  after(() => fx.close());

  test('the 429 carries Retry-After and the RateLimit fields the document requires', async () => {
    const reader = bearer(await fx.token());
    const document = new ContractDocument((await get(`${fx.gw.url}/api/openapi.json`, reader)).json() as Record<string, unknown>);
    watchAnswers(fx.gw.url);
    for (let i = 0; i < 4; i++) await get(`${fx.gw.url}/api/customers/1`, reader);
    const answers = stopWatching(fx.gw.url);
    assert.ok(answers.some((a) => a.status === 429));
    assert.deepEqual(
      answers.flatMap((a) => document.problemsOf(a)),
      [],
    );
  });
});
