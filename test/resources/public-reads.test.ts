import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';
import { assertProblem, CHALLENGE } from '../helpers/hostile.ts';

/** The shipped customers, readable by anyone; their orders stay behind the token. */
const PUBLIC_CUSTOMERS = { resources: { customers: { public: true } } };

describe('public reads of a resource (resources.<name>.public)', () => {
  let fx: Fixture;
  let reader: string;
  let writer: string;
  let outsider: string;

  before(async () => {
    fx = await startFixture(PUBLIC_CUSTOMERS);
    reader = await fx.token({ claims: { sub: 'reader-1', scope: 'customers:read' } });
    writer = await fx.token({ claims: { sub: 'writer-1', scope: 'customers:read customers:write' } });
    outsider = await fx.token({ claims: { sub: 'outsider-1', scope: 'catalogue:read' } });
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  const url = (path: string): string => `${fx.gw.url}${path}`;

  test('an item is served without credentials, cached, and shared with authenticated callers', async () => {
    const first = await get(url('/api/customers/5'));
    assert.equal(first.status, 200);
    assert.deepEqual((first.json() as { id: number }).id, 5);
    assert.equal(first.headers['cache-control'], 'max-age=60');
    const second = await get(url('/api/customers/5'));
    assert.equal(second.status, 200);
    assert.equal(second.text, first.text);
    const authenticated = await get(url('/api/customers/5'), bearer(reader));
    assert.equal(authenticated.status, 200);
    assert.equal(authenticated.text, first.text);
    assert.equal(fx.upstream.hits('/customers/5'), 1, 'one upstream request answered all three');
  });

  test('HEAD of an item and GET of the collection are served without credentials', async () => {
    const head = await get(url('/api/customers/6'), {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.ok(head.headers['etag']);
    const page = await get(url('/api/customers?offset=0&limit=5'));
    assert.equal(page.status, 200);
    assert.equal((page.json() as { items: unknown[] }).items.length, 5);
    assert.equal((await get(url('/api/customers?offset=0&limit=5'))).status, 200);
    assert.equal(fx.upstream.paths.filter((p) => p.startsWith('/customers?')).length, 1, 'the page was cached for the next anonymous caller');
  });

  test('a resource that is not public still needs a token', async () => {
    const res = await get(url('/api/customers/5/orders/501'));
    assertProblem(res, { status: 401, code: 'HG_ERR_AUTH_MISSING', headers: { 'www-authenticate': CHALLENGE.bare } });
  });

  test('a write without credentials is a 401 with the Bearer challenge, and reaches no upstream', async () => {
    const post = await send(url('/api/customers'), 'POST', { 'content-type': 'application/json' }, '{"name":"Ann","status":"active"}');
    assertProblem(post, { status: 401, code: 'HG_ERR_AUTH_MISSING', headers: { 'www-authenticate': CHALLENGE.bare } });
    const del = await send(url('/api/customers/5'), 'DELETE', { 'if-match': '"x"' });
    assertProblem(del, { status: 401, code: 'HG_ERR_AUTH_MISSING', headers: { 'www-authenticate': CHALLENGE.bare } });
    assert.equal(fx.upstream.hits(), 0);
  });

  test('a write needs the write scope even where reads are public', async () => {
    const res = await send(url('/api/customers/5'), 'DELETE', { ...bearer(reader), 'if-match': '"x"' });
    assertProblem(res, { status: 403, code: 'HG_ERR_AUTH_INSUFFICIENT_SCOPE' });
    assert.equal(fx.upstream.hits(), 0);
  });

  test('credentials that come along are checked: a bad token is a 401, not an anonymous read', async () => {
    const forged = await get(url('/api/customers/5'), bearer(`${reader}x`));
    assertProblem(forged, { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN', headers: { 'www-authenticate': CHALLENGE.invalidToken } });
    const expired = await get(url('/api/customers/5'), bearer(await fx.token({ claims: { sub: 'late' }, expiresIn: -3600 })));
    assert.equal(expired.status, 401);
    const malformed = await get(url('/api/customers/5'), { authorization: 'Bearer' });
    assert.ok(malformed.status === 400 || malformed.status === 401, `got ${malformed.status}`);
    assert.equal(fx.upstream.hits(), 0);
  });

  test("a valid token without the resource's scope is served as an anonymous caller", async () => {
    const res = await get(url('/api/customers/7'), bearer(outsider));
    assert.equal(res.status, 200);
    assert.equal(fx.upstream.headersSeen.at(-1)?.authorization, undefined);
  });

  test('a token with the write scope writes as before', async () => {
    const current = await get(url('/api/customers/8'));
    const res = await send(
      url('/api/customers/8'),
      'PATCH',
      { ...bearer(writer), 'content-type': 'application/merge-patch+json', 'if-match': current.headers['etag'] as string },
      '{"status":"active"}',
    );
    assert.ok(res.status < 300, `got ${res.status}: ${res.text}`);
  });

  test('the API root names the relations anyone may read', async () => {
    const root = await get(url('/api'), bearer(reader));
    assert.equal(root.status, 200);
    assert.deepEqual((root.json() as { public?: string[] }).public, ['customers', 'customer']);
    const hal = await get(url('/api'), { ...bearer(reader), accept: 'application/hal+json' });
    assert.deepEqual((hal.json() as { public?: string[] }).public, ['customers', 'customer']);
  });

  test('the OpenAPI document lets public reads go without credentials, and nothing else', async () => {
    type Op = { security: Record<string, string[]>[] };
    const doc = (await get(url('/api/openapi.json'), bearer(reader))).json() as {
      paths: Record<string, Record<string, Op>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const open = [{}, { bearerAuth: ['customers:read'] }];
    assert.deepEqual(doc.paths['/api/customers/{id}']?.['get']?.security, open);
    assert.deepEqual(doc.paths['/api/customers/{id}']?.['head']?.security, open);
    assert.deepEqual(doc.paths['/api/customers']?.['get']?.security, open);
    assert.deepEqual(doc.paths['/api/customers']?.['post']?.security, [{ bearerAuth: ['customers:write'] }]);
    assert.deepEqual(doc.paths['/api/customers/{id}']?.['delete']?.security, [{ bearerAuth: ['customers:write'] }]);
    assert.deepEqual(doc.paths['/api/customers/{customerId}/orders/{id}']?.['get']?.security, [{ bearerAuth: ['customers:read'] }]);
    assert.deepEqual(doc.paths['/api']?.['get']?.security, [{ bearerAuth: ['customers:read'] }]);
    assert.ok(doc.components.schemas['ApiRoot']?.properties['public'], 'the root schema describes its public field');
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });
});

describe('anonymous callers of a public resource are rate-limited by their address', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ ...PUBLIC_CUSTOMERS, rateLimit: { requestsPerSecond: 1, burst: 3 } });
  });
  after(() => fx.close());

  test("the address's bucket runs out for anonymous reads while a token's subject has its own", async () => {
    const url = `${fx.gw.url}/api/customers/5`;
    // Verified (and so cached) before the address runs out: an address over its budget gets no
    // crypto spent on tokens it has not shown before, as on every route.
    const token = await fx.token({ claims: { sub: 'someone' } });
    assert.equal((await get(url, bearer(token))).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await get(url)).status, 200, `anonymous read ${i + 1}`);
    const over = await get(url);
    assertProblem(over, { status: 429, code: 'HG_ERR_RATE_LIMITED' });
    assert.ok(over.headers['retry-after'] !== undefined);
    assert.equal((await get(url, bearer(token))).status, 200, 'a valid token is charged to its subject, not the address');
    fx.clock.advance(1000);
    assert.equal((await get(url)).status, 200, 'the address earns a request back a second later');
  });
});

describe('a gateway without public resources', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture();
  });
  after(() => fx.close());

  test('the API root has no public field and reads still need a token', async () => {
    const root = await get(`${fx.gw.url}/api`, bearer(await fx.token()));
    assert.equal((root.json() as { public?: unknown }).public, undefined);
    assert.equal((await get(`${fx.gw.url}/api/customers/5`)).status, 401);
  });
});
