import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send, type HttpAnswer } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };
const GADGET = { id: 1, name: 'Lamp', price: { amount: 12.5, currency: 'EUR' }, createdAt: '2026-01-01', stats: { rating: 4 } };

/** The failing members of a 422, as pointer → detail. */
function errorsOf(answer: HttpAnswer): Record<string, string> {
  return Object.fromEntries((answer.json() as { errors: { pointer: string; detail: string }[] }).errors.map((e) => [e.pointer, e.detail]));
}

describe('writes of nested records: read-only fields and merge patches (RFC 7396)', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-write-nested-'));
  const url = (path: string): string => `${fx.gw.url}${path}`;
  const writesSent = (): { method: string; path: string; body: string }[] => fx.upstream.requests.filter((r) => r.method !== 'GET');

  before(async () => {
    const schema = join(dir, 'gadget.schema.json');
    writeFileSync(
      schema,
      JSON.stringify({
        type: 'object',
        required: ['name', 'price'],
        properties: {
          name: { type: 'string', minLength: 1 },
          price: {
            type: 'object',
            required: ['amount', 'currency'],
            properties: { amount: { type: 'number', minimum: 0 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
            additionalProperties: false,
          },
          tags: { type: 'array', items: { type: 'object', required: ['label'], properties: { label: { type: 'string' } } } },
        },
      }),
    );
    fx = await startFixture({
      resources: {
        gadgets: {
          path: '/api/gadgets/{id}',
          params: { id: 'integer' },
          upstream: '/gadgets/{id}',
          fields: ['id', 'name', 'price'],
          exposeFields: ['tags', 'createdAt', { name: 'rating', pointer: '/stats/rating' }],
          readOnlyFields: ['createdAt', 'rating'],
          methods: ['GET', 'POST', 'PUT', 'PATCH'],
          collection: { path: '/api/gadgets', upstream: '/gadgets' },
          schema,
        },
      },
    });
    writer = bearer(await fx.token({ claims: { scope: 'customers:read gadgets:write' } }));
  });
  beforeEach(() => {
    fx.upstream.reset();
    fx.upstream.on('PATCH /gadgets/1', { kind: 'json', body: GADGET });
    fx.upstream.on('PUT /gadgets/1', { kind: 'json', body: GADGET });
    fx.upstream.on('POST /gadgets', { kind: 'json', status: 201, body: GADGET });
    fx.upstream.on('GET /gadgets/1', { kind: 'json', body: GADGET });
  });
  after(async () => {
    await fx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a read-only field is read like any other, a renamed one from its pointer', async () => {
    const answer = await get(url('/api/gadgets/1'), writer);
    assert.equal(answer.status, 200, answer.text);
    const body = answer.json() as Record<string, unknown>;
    assert.equal(body['createdAt'], '2026-01-01');
    assert.equal(body['rating'], 4);
  });

  test('a POST, PUT or PATCH body that sets a read-only field is a 422 naming it, and nothing is sent', async () => {
    const post = await send(url('/api/gadgets'), 'POST', { ...writer, ...json }, '{"name":"N","price":{"amount":1,"currency":"EUR"},"createdAt":"x"}');
    assertProblem(post, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    assert.match(errorsOf(post)['/createdAt'] ?? '', /is read-only \(resources\.gadgets\.readOnlyFields\)/);
    const put = await send(url('/api/gadgets/1'), 'PUT', { ...writer, ...json }, '{"name":"N","price":{"amount":1,"currency":"EUR"},"rating":5}');
    assertProblem(put, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    assert.deepEqual(Object.keys(errorsOf(put)), ['/rating']);
    // Even null, which would remove it.
    const patch = await send(url('/api/gadgets/1'), 'PATCH', { ...writer, ...mergePatch }, '{"createdAt":null}');
    assertProblem(patch, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    assert.match((patch.json() as { detail: string }).detail, /createdAt is read-only/);
    assert.deepEqual(writesSent(), []);
  });

  test('a nested partial object and a nested null are valid merge patches, sent as they came', async () => {
    const partial = await send(url('/api/gadgets/1'), 'PATCH', { ...writer, ...mergePatch }, '{"price":{"amount":3}}');
    assert.equal(partial.status, 200, partial.text);
    const removal = await send(url('/api/gadgets/1'), 'PATCH', { ...writer, ...mergePatch }, '{"price":{"currency":null},"name":null}');
    assert.equal(removal.status, 200, removal.text);
    assert.deepEqual(
      writesSent().map((w) => w.body),
      ['{"price":{"amount":3}}', '{"price":{"currency":null},"name":null}'],
    );
  });

  test("an invalid nested patch is a 422 naming each member by its path in the body, in the schema's own words", async () => {
    const answer = await send(url('/api/gadgets/1'), 'PATCH', { ...writer, ...mergePatch }, '{"price":{"amount":-1,"currency":"euro","extra":1}}');
    assertProblem(answer, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    const errors = errorsOf(answer);
    assert.deepEqual(Object.keys(errors).sort(), ['/price', '/price/amount', '/price/currency']);
    // Nothing of a rewritten schema shows: no "null", no "anyOf".
    assert.doesNotMatch(answer.text, /null|anyOf|schema in/);
    assert.deepEqual(writesSent(), []);
  });

  test('a null inside an array is a value, not a removal: an array is replaced whole, its items judged as written', async () => {
    const answer = await send(url('/api/gadgets/1'), 'PATCH', { ...writer, ...mergePatch }, '{"tags":[{"label":"a"},{}]}');
    assertProblem(answer, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    assert.deepEqual(Object.keys(errorsOf(answer)), ['/tags/1/label']);
  });

  test('a whole representation (PUT) still needs every required member, nested ones included', async () => {
    const answer = await send(url('/api/gadgets/1'), 'PUT', { ...writer, ...json }, '{"name":"N","price":{"amount":3}}');
    assertProblem(answer, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
    assert.deepEqual(Object.keys(errorsOf(answer)), ['/price/currency']);
  });

  test('the OpenAPI document marks read-only fields readOnly', async () => {
    const doc = (await get(url('/api/openapi.json'), writer)).json() as {
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const gadget = doc.components.schemas['Gadgets'];
    assert.equal(gadget?.properties['createdAt']?.['readOnly'], true);
    assert.equal(gadget?.properties['rating']?.['readOnly'], true);
    assert.equal(gadget?.properties['name']?.['readOnly'], undefined);
  });
});
