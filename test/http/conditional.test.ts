import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ifNoneMatchMatches } from '../../src/protocol/conditional.ts';
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
  test('matches a weak current tag by its opaque tag, in a list or without its W/ (weak comparison)', () => {
    assert.equal(ifNoneMatchMatches('W/"z", W/"a"', 'W/"a"'), true);
    assert.equal(ifNoneMatchMatches('"a"', 'W/"a"'), true);
    assert.equal(ifNoneMatchMatches('"b"', 'W/"a"'), false);
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

  // If-Match on a read (RFC 9110 sections 13.1.1 and 13.2.2).
  test('If-Match with the current ETag, a list holding it, or * answers 200 with the body', async () => {
    for (const ifMatch of [etag, `"other", ${etag}`, '*']) {
      const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-match': ifMatch });
      assert.equal(res.status, 200, ifMatch);
      assert.equal(res.headers['etag'], etag);
      assert.ok(res.text.length > 0);
    }
  });

  test('If-Match with another tag is a 412 problem; so is the weak form of the current one (strong comparison)', async () => {
    for (const ifMatch of ['"other"', `W/${etag}`]) {
      const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-match': ifMatch });
      assert.equal(res.status, 412, ifMatch);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal((res.json() as { code: string }).code, 'HG_ERR_PRECONDITION_FAILED');
      assert.equal(res.headers['etag'], undefined);
    }
  });

  test('If-Match is decided before If-None-Match: a false one is a 412 even when If-None-Match matches', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-match': '"other"', 'if-none-match': etag });
    assert.equal(res.status, 412);
    const both = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-match': etag, 'if-none-match': etag });
    assert.equal(both.status, 304);
  });

  test('HEAD with a false If-Match is a 412 without a body', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-match': '"other"' }, 'HEAD');
    assert.equal(res.status, 412);
    assert.equal(res.text, '');
  });

  test('an If-Match that is neither * nor a list of entity-tags is a 400, as on writes', async () => {
    const res = await get(`${fx.gw.url}/api/customers/3`, { ...auth, 'if-match': 'v1' });
    assert.equal(res.status, 400);
    assert.match((res.json() as { detail: string }).detail, /If-Match must be/);
  });

  test('If-Match never matches a weak current ETag (strong comparison, RFC 9110 section 8.8.3.2); only * holds', async () => {
    fx.upstream.on('/customers/7', { kind: 'json', body: { id: 7, name: 'Weak', status: 'active' }, headers: { etag: 'W/"v1"' } });
    const current = String((await get(`${fx.gw.url}/api/customers/7`, auth)).headers['etag']);
    assert.match(current, /^W\/"/);
    for (const ifMatch of [current, `"x", ${current}`, current.slice(2)]) {
      assert.equal((await get(`${fx.gw.url}/api/customers/7`, { ...auth, 'if-match': ifMatch })).status, 412, ifMatch);
    }
    assert.equal((await get(`${fx.gw.url}/api/customers/7`, { ...auth, 'if-match': '*' })).status, 200);
  });

  test('a miss with a false If-Match is a 412, and what it fetched is cached for the next read', async () => {
    const first = await get(`${fx.gw.url}/api/customers/6`, { ...auth, 'if-match': '"other"' });
    assert.equal(first.status, 412);
    const next = await get(`${fx.gw.url}/api/customers/6`, auth);
    assert.equal(next.status, 200);
    assert.match(String(next.headers['cache-status']), /hit/);
  });
});
