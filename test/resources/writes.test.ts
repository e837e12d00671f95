import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';

const WRITE = 'customers:read customers:write';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };

describe('writes through the gateway', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  let reader: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-writes-'));
  const url = (path: string): string => `${fx.gw.url}${path}`;
  /** What reached the upstream besides GETs. */
  const writesSent = (): { method: string; path: string; body: string }[] => fx.upstream.requests.filter((r) => r.method !== 'GET');

  before(async () => {
    const schema = join(dir, 'customer.schema.json');
    writeFileSync(
      schema,
      JSON.stringify({
        type: 'object',
        properties: { name: { type: 'string', minLength: 1 }, status: { enum: ['active', 'inactive'] }, email: { type: 'string' } },
      }),
    );
    fx = await startFixture({ resources: { customers: { exposeFields: ['email'], schema } }, upstream: { timeoutMs: 500, breaker: { failures: 100 } } });
    writer = bearer(await fx.token({ claims: { scope: WRITE } }));
    reader = bearer(await fx.token());
  });
  beforeEach(() => fx.upstream.reset());
  after(async () => {
    await fx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('refusals decided before anything is read or sent', () => {
    test('a token without customers:write is a 403 insufficient_scope naming the write scope', async () => {
      const res = await send(url('/api/customers/5'), 'PATCH', { ...reader, ...mergePatch, 'if-match': '"x"' }, '{"name":"N"}');
      assertProblem(res, { status: 403, code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE' });
      assert.match(String(res.headers['www-authenticate']), /scope="customers:write"/);
      assert.deepEqual(fx.upstream.requests, []);
    });

    test('PUT, PATCH and DELETE without If-Match are 428 (requireIfMatch is on for customers)', async () => {
      for (const [method, body] of [
        ['PUT', '{"name":"N","status":"active"}'],
        ['PATCH', '{"name":"N"}'],
        ['DELETE', undefined],
      ] as const) {
        const res = await send(url('/api/customers/5'), method, { ...writer, ...(method === 'PATCH' ? mergePatch : json) }, body);
        assertProblem(res, { status: 428, code: 'HG_ERR_PRECONDITION_REQUIRED' });
      }
      assert.deepEqual(fx.upstream.requests, []);
    });

    test('another media type is a 415 that says what the method takes', async () => {
      const post = await send(url('/api/customers'), 'POST', { ...writer, 'content-type': 'text/plain' }, '{}');
      assertProblem(post, { status: 415, code: 'HG_ERR_UNSUPPORTED_MEDIA_TYPE', headers: { 'accept-post': 'application/json' } });
      const patch = await send(url('/api/customers/5'), 'PATCH', { ...writer, ...json, 'if-match': '"x"' }, '{"name":"N"}');
      assertProblem(patch, { status: 415, code: 'HG_ERR_UNSUPPORTED_MEDIA_TYPE', headers: { 'accept-patch': 'application/merge-patch+json' } });
      const latin1 = await send(url('/api/customers'), 'POST', { ...writer, 'content-type': 'application/json; charset=iso-8859-1' }, '{}');
      assert.equal(latin1.status, 415);
      assert.deepEqual(fx.upstream.requests, []);
    });

    test('a body naming a field twice is a 422 pointing at it, even spelled with an escape: the upstream might apply the value we did not check', async () => {
      const twice = await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"N","status":"active","status":"x"}');
      assertProblem(twice, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.deepEqual((twice.json() as { errors: unknown }).errors, [
        { pointer: '/status', detail: 'is given twice in one object (RFC 7493 section 2.3): the upstream might apply the other value' },
      ]);
      const escaped = await send(url('/api/customers/5'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '"x"' }, '{"name":"N","\\u006eame":"M"}');
      assertProblem(escaped, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.deepEqual(fx.upstream.requests, []);
    });

    test('a body in a content coding is a 415 asking for it uncoded (Accept-Encoding: identity), gzip or a label alone; identity is taken', async () => {
      const record = '{"name":"N","status":"active"}';
      const gzipped = await send(url('/api/customers'), 'POST', { ...writer, ...json, 'content-encoding': 'gzip' }, gzipSync(record));
      assertProblem(gzipped, { status: 415, code: 'HG_ERR_UNSUPPORTED_MEDIA_TYPE', headers: { 'accept-encoding': 'identity' } });
      assert.match((gzipped.json() as { detail: string }).detail, /content coding/);
      // The label alone: the JSON would pass our check, and the upstream would be told nothing of the coding.
      const labelled = await send(url('/api/customers/5'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '"x"', 'content-encoding': 'br' }, '{"name":"N"}');
      assertProblem(labelled, { status: 415, code: 'HG_ERR_UNSUPPORTED_MEDIA_TYPE', headers: { 'accept-encoding': 'identity' } });
      assert.deepEqual(fx.upstream.requests, []);
      fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'N', status: 'active' } });
      const identity = await send(url('/api/customers'), 'POST', { ...writer, ...json, 'content-encoding': 'Identity' }, record);
      assert.equal(identity.status, 201);
    });

    test('a Content-Encoding list of identity alone, or empty (RFC 9110 sections 5.6.1 and 8.4), is no coding: the write is taken; a list naming gzip is still a 415', async () => {
      const record = '{"name":"N","status":"active"}';
      fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'N', status: 'active' } });
      for (const coding of ['identity, identity', 'identity,', ' , IDENTITY ', '']) {
        const res = await send(url('/api/customers'), 'POST', { ...writer, ...json, 'content-encoding': coding }, record);
        assert.equal(res.status, 201, `Content-Encoding: ${JSON.stringify(coding)}: ${res.text}`);
      }
      const listed = await send(url('/api/customers'), 'POST', { ...writer, ...json, 'content-encoding': 'identity, gzip' }, gzipSync(record));
      assertProblem(listed, { status: 415, code: 'HG_ERR_UNSUPPORTED_MEDIA_TYPE', headers: { 'accept-encoding': 'identity' } });
      assert.equal(writesSent().length, 4);
    });

    test('malformed JSON is 400; a body that is not an object, sets an unexposed field or changes the id is a 422 naming the field', async () => {
      assertProblem(await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":'), { status: 400, code: 'HG_ERR_INVALID_BODY' });
      const array = await send(url('/api/customers'), 'POST', { ...writer, ...json }, '[1,2]');
      assertProblem(array, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.equal((array.json() as { detail: string }).detail, 'The request body cannot be applied: it must be a JSON object.');
      // A BOM is refused, not skipped: the upstream would get the bytes with it (RFC 8259 section 8.1).
      const bom = await send(url('/api/customers'), 'POST', { ...writer, ...json }, '\uFEFF{"name":"N","status":"active"}');
      assertProblem(bom, { status: 400, code: 'HG_ERR_INVALID_BODY' });
      assert.match((bom.json() as { detail: string }).detail, /byte order mark/);
      const unexposed = await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"N","status":"active","internalNote":"x","links":{}}');
      assertProblem(unexposed, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.deepEqual((unexposed.json() as { errors: unknown[] }).errors, [
        { pointer: '/internalNote', detail: 'is not a field of this resource' },
        { pointer: '/links', detail: 'is not a field of this resource' },
      ]);
      const moved = await send(url('/api/customers/5'), 'PUT', { ...writer, ...json, 'if-match': '"x"' }, '{"id":6,"name":"N","status":"active"}');
      assertProblem(moved, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.match((moved.json() as { detail: string }).detail, /id must equal the path's id \(5\)/);
      assert.deepEqual(fx.upstream.requests, []);
    });

    test('resources.customers.schema (draft 2020-12) is enforced: every failing field is listed', async () => {
      const res = await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"","status":"gone","email":7}');
      assertProblem(res, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      const pointers = (res.json() as { errors: { pointer: string }[] }).errors.map((e) => e.pointer).sort();
      assert.deepEqual(pointers, ['/email', '/name', '/status']);
      // A merge patch names only what changes: required fields may be missing, null removes a field.
      fx.upstream.on('PATCH /customers/5', { kind: 'json', body: { id: 5, name: 'Customer 5', status: 'inactive' } });
      assert.equal((await send(url('/api/customers/5'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"email":null}')).status, 200);
    });

    test('a body over server.maxBodyBytes is 413: by its Content-Length before a byte is read, or while it streams', async () => {
      const big = 'x'.repeat(70_000);
      const declared = await send(url('/api/customers'), 'POST', { ...writer, ...json }, `{"name":"${big}"}`);
      assertProblem(declared, { status: 413, code: 'HG_ERR_PAYLOAD_TOO_LARGE' });
      // No Content-Length: chunked, refused once the streamed bytes pass the bound.
      async function* chunks(): AsyncGenerator<Buffer> {
        for (let i = 0; i < 20; i++) yield Buffer.alloc(8192, 0x20);
      }
      const res = await request(url('/api/customers'), { method: 'POST', headers: { ...writer, ...json }, body: Readable.from(chunks()) }).catch(
        (err: Error) => err,
      );
      if (!(res instanceof Error)) {
        assert.equal(res.statusCode, 413);
        await res.body.text();
      }
      assert.deepEqual(fx.upstream.requests, []);
    });
  });

  describe('what the upstream gets and what the client gets back', () => {
    test('POST sends the validated bytes as they came, and answers 201 with Location, ETag and the rendered record', async () => {
      const body = '{ "status":"active",  "name":"New One" }';
      fx.upstream.on('POST /customers', {
        kind: 'json',
        status: 201,
        body: { id: 900, name: 'New One', status: 'active', internalNote: 'x' },
        headers: { etag: '"v1"' },
      });
      const res = await send(
        url('/api/customers'),
        'POST',
        { ...writer, ...json, 'idempotency-key': '"k-post-1"', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
        body,
      );
      assert.equal(res.status, 201);
      assert.equal(res.headers['location'], '/api/customers/900');
      assert.equal(res.headers['content-location'], '/api/customers/900');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(
        res.text,
        JSON.stringify({ id: 900, name: 'New One', status: 'active', links: { self: '/api/customers/900', orders: '/api/customers/900/orders' } }),
      );
      const sent = writesSent()[0];
      assert.deepEqual(sent, { method: 'POST', path: '/customers', body });
      const headers = fx.upstream.headersSeen[0] ?? {};
      assert.equal(headers['content-type'], 'application/json');
      assert.equal(headers['idempotency-key'], '"k-post-1"');
      assert.equal(headers['traceparent'], '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
      assert.equal(headers['authorization'], undefined);
      // The ETag a write answers with is the ETag of the next GET of that item in the same format.
      const read = await get(url('/api/customers/900'), reader);
      assert.equal(read.headers['etag'], res.headers['etag']);
      assert.equal(fx.upstream.hits('/customers/900'), 0, 'the created representation was stored');
    });

    test("an ETag derived from the upstream's validator goes back to the upstream as its own in If-Match", async () => {
      fx.upstream.on('GET /customers/21', { kind: 'json', body: { id: 21, name: 'Before', status: 'active' }, headers: { etag: '"v7"' } });
      const read = await get(url('/api/customers/21'), reader);
      const etag = String(read.headers['etag']);
      assert.match(etag, /^"v7\.[A-Za-z0-9_-]{8}"$/, 'derived from the upstream\'s "v7"');
      const hal = await get(url('/api/customers/21'), { ...reader, accept: 'application/hal+json' });
      assert.notEqual(hal.headers['etag'], etag, 'one ETag per format');
      fx.upstream.on('PATCH /customers/21', { kind: 'json', body: { id: 21, name: 'After', status: 'active' }, headers: { etag: '"v8"' } });
      const res = await send(url('/api/customers/21'), 'PATCH', { ...writer, ...mergePatch, 'if-match': etag }, '{"name":"After"}');
      assert.equal(res.status, 200);
      const patchHeaders = fx.upstream.headersSeen[fx.upstream.requests.findIndex((r) => r.method === 'PATCH')] ?? {};
      assert.equal(patchHeaders['if-match'], '"v7"');
      assert.match(String(res.headers['etag']), /^"v8\./);
      // Read your write, in both formats.
      assert.equal(((await get(url('/api/customers/21'), reader)).json() as { name: string }).name, 'After');
      const halAfter = await get(url('/api/customers/21'), { ...reader, accept: 'application/hal+json' });
      assert.equal((halAfter.json() as { name: string }).name, 'After');
      assert.match(String(halAfter.headers['etag']), /^"v8\./);
      assert.equal(fx.upstream.hits('/customers/21'), 2, 'the read before, and the write; both reads after were the stored answer');
    });

    test('an ETag whose opaque part holds a comma (RFC 9110 etagc allows it) works as If-Match, alone or in a list', async () => {
      fx.upstream.on('GET /customers/24', { kind: 'json', body: { id: 24, name: 'Before', status: 'active' }, headers: { etag: '"v1,2"' } });
      const etag = String((await get(url('/api/customers/24'), reader)).headers['etag']);
      assert.match(etag, /^"v1,2\./);
      fx.upstream.on('PATCH /customers/24', { kind: 'json', body: { id: 24, name: 'After', status: 'active' }, headers: { etag: '"v1,3"' } });
      assert.equal((await send(url('/api/customers/24'), 'PATCH', { ...writer, ...mergePatch, 'if-match': etag }, '{"name":"After"}')).status, 200);
      assert.equal(fx.upstream.headersSeen[fx.upstream.requests.findIndex((r) => r.method === 'PATCH')]?.['if-match'], '"v1,2"');
      const listed = await send(
        url('/api/customers/24'),
        'PATCH',
        { ...writer, ...mergePatch, 'if-match': `"other", ${etag.replace('v1,2', 'v1,3')}` },
        '{"name":"Again"}',
      );
      assert.equal(listed.status, 200);
      assert.equal(fx.upstream.headersSeen.at(-1)?.['if-match'], '"v1,3"');
    });

    test('an ETag holding a comma is matched by If-None-Match inside a list: 304, not a 200 re-sent', async () => {
      fx.upstream.on('GET /customers/25', { kind: 'json', body: { id: 25, name: 'Comma', status: 'active' }, headers: { etag: '"v1,2"' } });
      const etag = String((await get(url('/api/customers/25'), reader)).headers['etag']);
      assert.match(etag, /^"v1,2\./);
      const res = await get(url('/api/customers/25'), { ...reader, 'if-none-match': `"other", ${etag}` });
      assert.equal(res.status, 304);
      assert.equal(res.headers['etag'], etag);
    });

    test('a digest ETag (an upstream without validators) is checked against the current item; another is 412 before the write is sent', async () => {
      const read = await get(url('/api/customers/22'), reader);
      const etag = String(read.headers['etag']);
      fx.upstream.on('PUT /customers/22', { kind: 'json', body: { id: 22, name: 'Put', status: 'active' } });
      assert.equal((await send(url('/api/customers/22'), 'PUT', { ...writer, ...json, 'if-match': etag }, '{"name":"Put","status":"active"}')).status, 200);
      fx.upstream.reset();
      assertProblem(
        await send(url('/api/customers/22'), 'PUT', { ...writer, ...json, 'if-match': '"not-a-version-of-it"' }, '{"name":"P","status":"active"}'),
        { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' },
      );
      assert.deepEqual(writesSent(), [], 'only the current item was read');
    });

    test("the upstream's answers map to problems: 404, 409, 412, 400/422 (its detail only from problem+json), 5xx as 502", async () => {
      const attempt = (status: number, body: unknown, contentType = 'application/json') => {
        fx.upstream.on('PATCH /customers/30', { kind: 'raw', status, body: JSON.stringify(body), headers: { 'content-type': contentType } });
        return send(url('/api/customers/30'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"name":"N"}');
      };
      assertProblem(await attempt(404, {}), { status: 404, code: 'HG_ERR_CUSTOMER_NOT_FOUND' });
      const conflict = await attempt(409, { type: 'about:blank', title: 'Conflict', status: 409, detail: 'name taken' }, 'application/problem+json');
      assertProblem(conflict, { status: 409, code: 'HG_ERR_CONFLICT' });
      assert.equal((conflict.json() as { detail: string }).detail, 'name taken');
      assertProblem(await attempt(412, {}), { status: 412, code: 'HG_ERR_PRECONDITION_FAILED' });
      const withDetail = await attempt(
        422,
        { type: 'about:blank', title: 'x', status: 422, detail: 'status may not change on Sundays' },
        'application/problem+json',
      );
      assertProblem(withDetail, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.equal((withDetail.json() as { detail: string }).detail, 'status may not change on Sundays');
      const plain = await attempt(400, { detail: 'internal: table customers_v2 locked' });
      assertProblem(plain, { status: 422, code: 'HG_ERR_UNPROCESSABLE' });
      assert.doesNotMatch(plain.text, /customers_v2/, 'a detail outside problem+json is not shown');
      assertProblem(await attempt(500, {}), { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    });

    test('DELETE answers 204 (also for an upstream 200 with a body) and drops the customer and what lies below it', async () => {
      assert.equal((await get(url('/api/customers/40'), reader)).status, 200);
      assert.equal((await get(url('/api/customers/40/orders'), reader)).status, 200);
      fx.upstream.on('DELETE /customers/40', { kind: 'json', body: { deleted: true } });
      const res = await send(url('/api/customers/40'), 'DELETE', { ...writer, 'if-match': '*' });
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      fx.upstream.on('GET /customers/40', { kind: 'json', status: 404, body: {} });
      assert.equal((await get(url('/api/customers/40'), reader)).status, 404);
      await get(url('/api/customers/40/orders'), reader);
      assert.equal(fx.upstream.hits('/customers/40/orders'), 2, 'the orders below it were dropped too');
    });

    test('a write drops every cached page of the collection', async () => {
      await get(url('/api/customers?offset=0&limit=5'), reader);
      fx.upstream.on('PATCH /customers/3', { kind: 'json', body: { id: 3, name: 'Renamed', status: 'active' } });
      assert.equal((await send(url('/api/customers/3'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"name":"Renamed"}')).status, 200);
      await get(url('/api/customers?offset=0&limit=5'), reader);
      assert.equal(fx.upstream.hits('/customers?offset=0&limit=5'), 2);
    });

    test('a write whose outcome is unknown (the upstream timed out) leaves the item dropped, and no stale copy answers for it', async () => {
      await get(url('/api/customers/50'), reader);
      fx.upstream.on('PATCH /customers/50', { kind: 'hang' });
      assertProblem(await send(url('/api/customers/50'), 'PATCH', { ...writer, ...mergePatch, 'if-match': '*' }, '{"name":"N"}'), {
        status: 504,
        code: 'HG_ERR_UPSTREAM_TIMEOUT',
      });
      // Past max-age, a failing upstream would let a stale entry answer (stale-if-error): there is none to.
      fx.clock.advance(61_000);
      fx.upstream.on('GET /customers/50', { kind: 'json', status: 500, body: {} });
      assertProblem(await get(url('/api/customers/50'), reader), { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    });

    test('PUT is sent again after a reset before any answer; POST and PATCH never are', async () => {
      fx.upstream.on('PUT /customers/60', { kind: 'sequence', steps: [{ kind: 'reset' }, { kind: 'json', body: { id: 60, name: 'P', status: 'active' } }] });
      assert.equal((await send(url('/api/customers/60'), 'PUT', { ...writer, ...json, 'if-match': '*' }, '{"name":"P","status":"active"}')).status, 200);
      assert.equal(writesSent().filter((r) => r.method === 'PUT').length, 2);
      fx.upstream.on('POST /customers', { kind: 'reset' });
      assertProblem(await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"N","status":"active"}'), {
        status: 502,
        code: 'HG_ERR_UPSTREAM_BAD_GATEWAY',
      });
      assert.equal(writesSent().filter((r) => r.method === 'POST').length, 1);
    });
  });

  describe('Idempotency-Key', () => {
    test('the same key and body replay the first answer without reaching the upstream; another body is 422', async () => {
      fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 701, name: 'Once', status: 'active' } });
      const headers = { ...writer, ...json, 'idempotency-key': '"order-701"' };
      const first = await send(url('/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
      const again = await send(url('/api/customers'), 'POST', headers, '{"name":"Once","status":"active"}');
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.text, first.text);
      assert.equal(again.headers['location'], first.headers['location']);
      assert.equal(writesSent().length, 1);
      assertProblem(await send(url('/api/customers'), 'POST', headers, '{"name":"Twice","status":"active"}'), {
        status: 422,
        code: 'HG_ERR_IDEMPOTENCY_KEY_REUSED',
      });
      assert.equal(writesSent().length, 1);
    });

    test('the same key while the first request still runs is 409', async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      fx.upstream.on('POST /customers', { kind: 'wait', until: held, then: { kind: 'json', status: 201, body: { id: 702, name: 'Slow', status: 'active' } } });
      const headers = { ...writer, ...json, 'idempotency-key': '"slow-702"' };
      const first = send(url('/api/customers'), 'POST', headers, '{"name":"Slow","status":"active"}');
      while (fx.upstream.active() === 0) await new Promise((r) => setTimeout(r, 5));
      assertProblem(await send(url('/api/customers'), 'POST', headers, '{"name":"Slow","status":"active"}'), {
        status: 409,
        code: 'HG_ERR_IDEMPOTENCY_KEY_IN_USE',
      });
      release();
      assert.equal((await first).status, 201);
    });

    test('an answer whose outcome is unknown is not kept: a retry goes to the upstream again', async () => {
      fx.upstream.on('POST /customers', {
        kind: 'sequence',
        steps: [{ kind: 'hang' }, { kind: 'json', status: 201, body: { id: 703, name: 'Retry', status: 'active' } }],
      });
      const headers = { ...writer, ...json, 'idempotency-key': '"retry-703"' };
      assert.equal((await send(url('/api/customers'), 'POST', headers, '{"name":"Retry","status":"active"}')).status, 504);
      assert.equal((await send(url('/api/customers'), 'POST', headers, '{"name":"Retry","status":"active"}')).status, 201);
      assert.equal(writesSent().length, 2);
    });

    test('a change the upstream made but whose answer cannot be rendered is final: a retry with the key is not sent again', async () => {
      // A 201 without the created record: the customer exists now, but the gateway cannot show it.
      fx.upstream.on('POST /customers', { kind: 'raw', status: 201, body: '' });
      const headers = { ...writer, ...json, 'idempotency-key': '"made-704"' };
      assertProblem(await send(url('/api/customers'), 'POST', headers, '{"name":"Made","status":"active"}'), {
        status: 502,
        code: 'HG_ERR_UPSTREAM_BAD_GATEWAY',
      });
      assertProblem(await send(url('/api/customers'), 'POST', headers, '{"name":"Made","status":"active"}'), {
        status: 502,
        code: 'HG_ERR_UPSTREAM_BAD_GATEWAY',
      });
      assert.equal(writesSent().length, 1, 'one customer was created, not two');
    });

    test('a malformed key is 400, and with "idempotency": "required" a POST without one is 400', async () => {
      assertProblem(await send(url('/api/customers'), 'POST', { ...writer, ...json, 'idempotency-key': 'unquoted' }, '{"name":"N","status":"active"}'), {
        status: 400,
        code: 'HG_ERR_BAD_REQUEST',
      });
      const strict = await startFixture({ resources: { customers: { idempotency: 'required' } } });
      after(() => strict.close());
      const token = bearer(await strict.token({ claims: { scope: WRITE } }));
      assertProblem(await send(`${strict.gw.url}/api/customers`, 'POST', { ...token, ...json }, '{"name":"N","status":"active"}'), {
        status: 400,
        code: 'HG_ERR_IDEMPOTENCY_KEY_MISSING',
      });
      assert.equal(strict.upstream.requests.length, 0);
    });
  });
});

describe('who may write: the owner rule', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ auth: { ownerClaim: 'customer_id' } });
  });
  after(() => fx.close());

  test('a token changes only its own customer unless it holds auth.readAnyScope; POST on the collection needs it too', async () => {
    const own = bearer(await fx.token({ claims: { scope: WRITE, customer_id: 5 } }));
    fx.upstream.on('PATCH /customers/5', { kind: 'json', body: { id: 5, name: 'Mine', status: 'active' } });
    assert.equal((await send(`${fx.gw.url}/api/customers/5`, 'PATCH', { ...own, ...mergePatch, 'if-match': '*' }, '{"name":"Mine"}')).status, 200);
    assertProblem(await send(`${fx.gw.url}/api/customers/6`, 'PATCH', { ...own, ...mergePatch, 'if-match': '*' }, '{"name":"Theirs"}'), {
      status: 403,
      code: 'HG_ERR_NOT_OWNER',
    });
    assertProblem(await send(`${fx.gw.url}/api/customers`, 'POST', { ...own, ...json }, '{"name":"N","status":"active"}'), {
      status: 403,
      code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE',
    });
    const any = bearer(await fx.token({ claims: { scope: `${WRITE} customers:read:any`, customer_id: 5 } }));
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 800, name: 'N', status: 'active' } });
    assert.equal((await send(`${fx.gw.url}/api/customers`, 'POST', { ...any, ...json }, '{"name":"N","status":"active"}')).status, 201);
    assert.deepEqual(
      fx.upstream.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`),
      ['PATCH /customers/5', 'POST /customers'],
    );
  });
});
