import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { assertProblem, assertStillServes, rawAnswer } from '../helpers/hostile.ts';

/**
 * Hostile input catalogue, part 1: malformed customer and order ids. Only the canonical spelling
 * (digits, no sign, no leading zero, at most 2^53-1) names a resource; everything else is 404
 * before authentication, the cache or the upstream are involved.
 */
describe('hostile input: malformed ids', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    fx = await startFixture();
    token = await fx.token({ expiresIn: 24 * 3600 });
  });
  after(async () => {
    // None of them reached the upstream with anything but a canonical path.
    for (const path of fx.upstream.paths) assert.match(path, /^\/customers\/[1-9]\d*(\/orders(\/[1-9]\d*)?)?$/);
    await fx.close();
  });

  const notFound = { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' } as const;

  /** The exact bytes on a raw socket: an HTTP client library would normalise some of these paths first. */
  const send = (path: string, auth = true) =>
    rawAnswer(fx.gw.port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${token}\r\n` : ''}Connection: close\r\n\r\n`);

  // [name, path as sent (already percent-encoded where a client would)]
  const cases: Array<[string, string]> = [
    ['letters', '/api/customers/abc'],
    ['a negative id', '/api/customers/-1'],
    ['an explicit plus sign', '/api/customers/+1'],
    ['exponent notation', '/api/customers/1e3'],
    ['a leading zero', '/api/customers/007'],
    ['zero', '/api/customers/0'],
    ['a decimal', '/api/customers/1.0'],
    ['hexadecimal', '/api/customers/0x1A'],
    ['2^53 + 1, beyond exact JSON numbers', '/api/customers/9007199254740993'],
    ['seventeen digits', '/api/customers/12345678901234567'],
    ['a 101-digit id, beyond the router parameter limit', `/api/customers/${'9'.repeat(101)}`],
    ['a percent-encoded NUL', '/api/customers/%00'],
    ['an id followed by an encoded NUL', '/api/customers/1%00'],
    ['an encoded traversal', '/api/customers/..%2f'],
    ['an encoded traversal to another customer', '/api/customers/..%2F2'],
    ['a dot-dot segment', '/api/customers/../customers/1'],
    ['a matrix parameter', '/api/customers/1;2'],
    ['a trailing slash', '/api/customers/1/'],
    ['a doubled slash', '/api/customers//1'],
    ['a percent-encoded digit', '/api/customers/%31'],
    ['an encoded space before the id', '/api/customers/%201'],
    ['an encoded space after the id', '/api/customers/1%20'],
    ['Arabic-Indic digits ١٢٣, percent-encoded', `/api/customers/${encodeURIComponent('١٢٣')}`],
    ['fullwidth digits １２３, percent-encoded', `/api/customers/${encodeURIComponent('１２３')}`],
    ['a malformed percent escape', '/api/customers/%zz'],
    ['a malformed order id', '/api/customers/1/orders/01'],
    ['a negative order id', '/api/customers/1/orders/-101'],
    ['a malformed customer id under orders', '/api/customers/abc/orders'],
    ['upper-case path', '/API/CUSTOMERS/1'],
  ];
  for (const [name, path] of cases) {
    test(`${name} (${path.length > 60 ? `${path.slice(0, 60)}…` : path}) is 404 not-found`, async () => {
      assertProblem(await send(path), notFound);
      await assertStillServes(fx.gw.url, token);
    });
  }

  test('a malformed id is 404 even without a token (nothing is said about authentication first)', async () => {
    assertProblem(await send('/api/customers/abc', false), notFound);
    await assertStillServes(fx.gw.url, token);
  });

  test('raw UTF-8 digits in the request line are refused by the parser: 400 bad-request, connection closed', async () => {
    const answer = await rawAnswer(fx.gw.port, Buffer.from(`GET /api/customers/١٢٣ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`));
    assertProblem(answer, { status: 400, code: 'HG_ERR_BAD_REQUEST', headers: { connection: 'close' } });
    assert.ok(answer.closed);
    await assertStillServes(fx.gw.url, token);
  });

  test('the largest exact id, 2^53-1, is canonical and goes to the upstream (404 customer-not-found there)', async () => {
    assertProblem(await get(`${fx.gw.url}/api/customers/9007199254740991`, bearer(token)), { status: 404, code: 'HG_ERR_CUSTOMER_NOT_FOUND' });
    assert.equal(fx.upstream.hits('/customers/9007199254740991'), 1);
  });
});
