import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ifNoneMatchMatches } from '../../src/http/conditional.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';

describe('ifNoneMatchMatches', () => {
  test('matches the exact tag, a list containing it, its weak form and *', () => {
    assert.equal(ifNoneMatchMatches('"a"', '"a"'), true);
    assert.equal(ifNoneMatchMatches('"x", "a"', '"a"'), true);
    assert.equal(ifNoneMatchMatches('W/"a"', '"a"'), true);
    assert.equal(ifNoneMatchMatches(' * ', '"a"'), true);
  });
  test('splits a list by its quoted tags, so a tag holding a comma matches (RFC 9110 etagc)', () => {
    assert.equal(ifNoneMatchMatches('"x", "v1,2.abc"', '"v1,2.abc"'), true);
    assert.equal(ifNoneMatchMatches('"x",W/"v1,2.abc"', '"v1,2.abc"'), true);
    assert.equal(ifNoneMatchMatches('"v1", "2.abc"', '"v1,2.abc"'), false);
  });
  test('does not match other tags or an unquoted value', () => {
    assert.equal(ifNoneMatchMatches('"b"', '"a"'), false);
    assert.equal(ifNoneMatchMatches('a', '"a"'), false);
    assert.equal(ifNoneMatchMatches('', '"a"'), false);
  });
});

describe('conditional GET', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  let etag: string;
  before(async () => {
    fx = await startFixture();
    auth = bearer(await fx.token());
    etag = String((await get(`${fx.gw.url}/api/customers/3`, auth)).headers['etag']);
  });
  after(() => fx.close());

  test('a matching If-None-Match answers 304 with ETag, Cache-Control and Age, and no body', async () => {
    fx.clock.advance(7000);
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-none-match': etag });
    assert.equal(res.status, 304);
    assert.equal(res.text, '');
    assert.equal(res.headers['etag'], etag);
    assert.equal(res.headers['cache-control'], 'max-age=60');
    assert.equal(res.headers['age'], '7');
    assert.equal(res.headers['content-type'], undefined);
  });

  test('If-None-Match: * answers 304', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-none-match': '*' });
    assert.equal(res.status, 304);
  });

  test('a weak form of the current tag answers 304', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-none-match': `"nope", W/${etag}` });
    assert.equal(res.status, 304);
  });

  test('a different tag answers 200 with the body', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-none-match': '"something-else"' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['etag'], etag);
    assert.ok(res.text.length > 0);
  });

  test('a conditional request still needs a valid token', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { 'if-none-match': etag });
    assert.equal(res.status, 401);
  });
});
