import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('GET /api/customers/<id>', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture();
    auth = bearer(await fx.token());
  });
  after(() => fx.close());

  test('answers 200 with the seed representation and headers', async () => {
    const res = await get(`${fx.gw.url}/api/customers/42`, { ...auth, accept: 'application/json' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'max-age=60');
    assert.match(String(res.headers['etag']), /^"[A-Za-z0-9_-]+"$/, 'a strong ETag');
    assert.equal(res.headers['age'], '0');
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
    assert.equal(
      res.text,
      JSON.stringify({ id: 42, name: 'Customer 42', status: 'active', links: { self: '/api/customers/42', orders: '/api/customers/42/orders' } }),
    );
  });

  test('links.self equals the requested path, and a query string is not part of it', async () => {
    const body = (await get(`${fx.gw.url}/api/customers/7?view=full`, auth)).json() as { id: number; links: { self: string; orders: string } };
    assert.equal(body.id, 7);
    assert.equal(body.links.self, '/api/customers/7');
    assert.equal(body.links.orders, '/api/customers/7/orders');
  });

  test('fields the upstream sends beyond id, name and status are not exposed', async () => {
    const body = (await get(`${fx.gw.url}/api/customers/8`, auth)).json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['id', 'name', 'status', 'links']);
  });

  test('HEAD answers like GET without a body', async () => {
    const full = await get(`${fx.gw.url}/api/customers/9`, auth);
    const head = await get(`${fx.gw.url}/api/customers/9`, auth, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-type'], 'application/json');
    assert.equal(head.headers['content-length'], full.headers['content-length']);
    assert.equal(head.headers['etag'], full.headers['etag']);
  });

  // The shipped config gives customers every method (docs/writes.md): POST acts on the collection.
  test('POST on a customer is 405 with Allow listing the methods an item takes', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, auth, 'POST');
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, HEAD, PUT, PATCH, DELETE');
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(res).type, 'urn:hypergate:problem:method-not-allowed');
  });

  test('OPTIONS on a customer says what it takes: 204 with Allow and Accept-Patch, no token needed', async () => {
    const res = await get(`${fx.gw.url}/api/customers/1`, {}, 'OPTIONS');
    assert.equal(res.status, 204);
    assert.equal(res.headers['allow'], 'GET, HEAD, PUT, PATCH, DELETE');
    assert.equal(res.headers['accept-patch'], 'application/merge-patch+json');
    assert.equal(res.headers['accept-post'], undefined);
  });

  for (const path of [
    '/',
    '/api/',
    '/api/customer/1',
    '/api/customers/',
    '/api/customers/1/orders/',
    '/api/customers/1/',
    '/API/customers/1',
    '/api/customers/1/orders/x/y',
  ]) {
    test(`an unknown path (${path}) is a 404 problem`, async () => {
      const res = await get(`${fx.gw.url}${path}`, auth);
      assert.equal(res.status, 404);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.deepEqual(res.json(), {
        type: 'urn:hypergate:problem:not-found',
        title: 'Not Found',
        status: 404,
        detail: 'No resource exists at this path.',
        code: 'HG_ERR_ROUTE_NOT_FOUND',
      });
    });
  }

  test('non-canonical ids are 404 problems and never reach the upstream', async () => {
    const before = fx.upstream.hits();
    const ids = [
      'abc',
      '-1',
      '+1',
      '0',
      '007',
      '1e3',
      '1.0',
      '0x10',
      '%31',
      '1%2F2',
      '..%2f',
      '9007199254740992',
      '99999999999999999',
      '١٢',
      '1;2',
      '%00',
      ' 1',
    ];
    for (const id of ids) {
      const res = await get(`${fx.gw.url}/api/customers/${id}`, auth);
      assert.equal(res.status, 404, `id ${id}`);
      assert.equal(problemOf(res).code, 'HG_ERR_ROUTE_NOT_FOUND', `id ${id}`);
    }
    assert.equal(fx.upstream.hits(), before);
  });

  test('the largest safe integer id is canonical and reaches the upstream', async () => {
    const res = await get(`${fx.gw.url}/api/customers/9007199254740991`, auth);
    assert.equal(res.status, 404);
    assert.equal(problemOf(res).code, 'HG_ERR_CUSTOMER_NOT_FOUND');
    assert.equal(fx.upstream.hits('/customers/9007199254740991'), 1);
  });

  test('a customer the upstream does not know is a 404 customer-not-found problem', async () => {
    const res = await get(`${fx.gw.url}/api/customers/2000000`, auth);
    assert.equal(res.status, 404);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(problemOf(res), {
      type: 'urn:hypergate:problem:customer-not-found',
      title: 'Customer Not Found',
      status: 404,
      detail: 'No customer exists with this id.',
      code: 'HG_ERR_CUSTOMER_NOT_FOUND',
    });
  });
});

describe('exposed fields', () => {
  let fx: Fixture;
  before(async () => {
    fx = await startFixture({ resources: { customers: { exposeFields: ['email', 'missingField'] } } });
  });
  after(() => fx.close());

  test('fields the operator lists are exposed before links; absent ones are skipped', async () => {
    const res = await get(`${fx.gw.url}/api/customers/5`, bearer(await fx.token()));
    assert.equal(
      res.text,
      JSON.stringify({
        id: 5,
        name: 'Customer 5',
        status: 'inactive',
        email: 'c5@example.com',
        links: { self: '/api/customers/5', orders: '/api/customers/5/orders' },
      }),
    );
  });
});
