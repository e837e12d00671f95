import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ClaimTable } from '../../src/auth/claims.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { RequestHeaders, setHeader } from '../../src/upstream/request-headers.ts';
import { startFixture } from '../helpers/fixture.ts';
import { bearer, get, send } from '../helpers/gateway.ts';

/**
 * The upstream's request headers are built as undici's flat [name, value, ...] list
 * (request-headers.ts), where an object used to be written: a name must still reach the upstream once,
 * with the value that was written last.
 */
describe('the headers an upstream request carries', () => {
  test("a write's Idempotency-Key takes the place of a configured header of that name; a read sends the configured one", async () => {
    const fx = await startFixture({
      resources: { customers: { requireIfMatch: false } },
      upstream: { headers: { 'Idempotency-Key': 'configured' } },
    });
    after(() => fx.close());
    const writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 900, name: 'New', status: 'active' } });
    const res = await send(
      `${fx.gw.url}/api/customers`,
      'POST',
      { ...writer, 'content-type': 'application/json', 'idempotency-key': '"k-1"' },
      '{"name":"New","status":"active"}',
    );
    assert.equal(res.status, 201);
    assert.equal(fx.upstream.headersSeen[0]?.['idempotency-key'], '"k-1"');
    assert.equal((await get(`${fx.gw.url}/api/customers/7`, writer)).status, 200);
    assert.equal(fx.upstream.headersSeen[1]?.['idempotency-key'], 'configured');
  });

  test("two forwardClaims entries that name one header in different case send it once, with the last one's claim", async () => {
    const fx = await startFixture({ upstream: { forwardClaims: { 'X-Who': 'sub', 'x-who': 'tenant' } } });
    after(() => fx.close());
    const token = await fx.token({ claims: { sub: 'alice', tenant: 'acme' } });
    assert.equal((await get(`${fx.gw.url}/api/customers/1`, bearer(token))).status, 200);
    assert.equal(fx.upstream.headersSeen[0]?.['x-who'], 'acme');
  });
});

describe('assembling the headers of a request to a service', () => {
  const service = (upstream: Record<string, unknown>) => configWith({ upstream: { url: 'http://127.0.0.1:1', ...upstream } }).upstream;
  const call = { requestId: 'req-1', traceparent: undefined, authorization: 'Bearer abc', claims: ['alice', 'acme'] };

  test('without a call, accept and the configured headers only, by lower-case name, values read from the environment once', () => {
    // The config is validated against this process's environment; the headers read the one given.
    process.env['HG_TEST_TENANT'] = 'validated';
    const config = service({ headers: { 'X-Fixed': 'yes', 'X-Tenant': { env: 'HG_TEST_TENANT' } } });
    delete process.env['HG_TEST_TENANT'];
    const env: NodeJS.ProcessEnv = { HG_TEST_TENANT: 'from-env' };
    const headers = new RequestHeaders(config, undefined, env);
    env['HG_TEST_TENANT'] = 'changed';
    assert.deepEqual(headers.of(undefined), ['accept', 'application/json', 'x-fixed', 'yes', 'x-tenant', 'from-env']);
  });

  test('a call adds the request id and, when valid, the trace context; Authorization and claims only when configured', () => {
    const claims = new ClaimTable(['sub', 'tenant']);
    const plain = new RequestHeaders(service({}), claims, {});
    assert.deepEqual(plain.of({ ...call, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'a=1' }), [
      'accept',
      'application/json',
      'x-request-id',
      'req-1',
      'traceparent',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'tracestate',
      'a=1',
    ]);
    const forwarding = new RequestHeaders(service({ forwardAuthorization: true, forwardClaims: { 'X-Who': 'sub', 'X-Org': 'tenant' } }), claims, {});
    assert.deepEqual(forwarding.of(call), [
      'accept',
      'application/json',
      'x-request-id',
      'req-1',
      'authorization',
      'Bearer abc',
      'x-who',
      'alice',
      'x-org',
      'acme',
    ]);
  });

  test('a claim the token does not have sends no header', () => {
    const headers = new RequestHeaders(service({ forwardClaims: { 'X-Org': 'tenant' } }), new ClaimTable(['tenant']), {});
    assert.deepEqual(headers.of({ ...call, claims: [undefined] }), ['accept', 'application/json', 'x-request-id', 'req-1']);
  });

  test('each request gets a list of its own', () => {
    const headers = new RequestHeaders(service({}), undefined, {});
    const first = headers.of(undefined);
    first.push('x-extra', '1');
    assert.deepEqual(headers.of(undefined), ['accept', 'application/json']);
  });

  test('setHeader replaces the value of a name already there, or adds it', () => {
    const list = ['accept', 'application/json', 'if-match', '"configured"'];
    setHeader(list, 'if-match', '"v2"');
    setHeader(list, 'idempotency-key', 'k');
    assert.deepEqual(list, ['accept', 'application/json', 'if-match', '"v2"', 'idempotency-key', 'k']);
  });
});
