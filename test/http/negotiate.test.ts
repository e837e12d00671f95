import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { acceptsJson } from '../../src/protocol/negotiate.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';

describe('acceptsJson', () => {
  const yes = [
    undefined,
    '',
    'application/json',
    '*/*',
    'application/*',
    'text/html, application/json;q=0.5',
    'APPLICATION/JSON',
    'application/json; charset=utf-8',
    '*/*;q=0.1',
    'text/html;q=0.9, */*;q=0.8',
    'application/json;q=0.001',
  ];
  const no = [
    'text/html',
    'application/xml',
    'application/json;q=0',
    'application/json;q=0, */*',
    'application/*;q=0',
    '*/*;q=0',
    'application/json;q=0, application/*;q=1',
    'image/*',
    'application/json;q=abc',
  ];
  for (const header of yes) test(`admits JSON for Accept: ${String(header)}`, () => assert.equal(acceptsJson(header), true));
  for (const header of no) test(`refuses JSON for Accept: ${header}`, () => assert.equal(acceptsJson(header), false));
  test('the more specific range wins over a wildcard', () => {
    assert.equal(acceptsJson('*/*;q=0, application/json'), true);
    assert.equal(acceptsJson('application/json;q=0, */*;q=1'), false);
  });
});

describe('negotiation on a running gateway', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    fx = await startFixture();
    auth = bearer(await fx.token());
  });
  after(() => fx.close());

  for (const accept of ['application/json', 'application/*', '*/*', 'text/html;q=0.9, application/json;q=0.1']) {
    test(`Accept: ${accept} gets JSON`, async () => {
      const res = await get(`${fx.gw.url}/api/customers/1`, { ...auth, accept });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json');
    });
  }

  test('an Accept that excludes JSON is a 406 problem and does not reach the upstream', async () => {
    const before = fx.upstream.hits();
    const res = await get(`${fx.gw.url}/api/customers/11`, { ...auth, accept: 'text/html, application/json;q=0' });
    assert.equal(res.status, 406);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(res).type, 'urn:hypergate:problem:not-acceptable');
    assert.equal(fx.upstream.hits(), before);
  });
});
