import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ResponseHeaders } from '../../src/lib/exchange.ts';
import { freshnessOf } from '../../src/upstream/cache-control.ts';

/** When the answer arrived, by our clock (2026-11-23 10:00:00 UTC). */
const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const lifetime = (headers: ResponseHeaders): number | null => freshnessOf(headers, NOW).maxAgeSeconds;
const cc = (value: string | string[]): number | null => lifetime({ 'cache-control': value });

describe('upstream Cache-Control: max-age and s-maxage', () => {
  test('an answer without Cache-Control or Expires gives no lifetime, may be stored and served stale', () => {
    assert.deepEqual(freshnessOf({}, NOW), { noStore: false, maxAgeSeconds: null, staleAllowed: true });
  });

  test('max-age gives the lifetime in seconds, in token or quoted form, any case', () => {
    assert.equal(cc('max-age=30'), 30);
    assert.equal(cc('public, MAX-AGE="30"'), 30);
    assert.equal(cc(' max-age = 30 '), 30);
  });

  test('a max-age past 2^31 counts as 2^31', () => {
    assert.equal(cc('max-age=99999999999999999999'), 2 ** 31);
  });

  for (const value of ['-1', 'abc', '5.5', '', '1e3', '0x10', '+5', '"5.5"']) {
    test(`an invalid max-age (${JSON.stringify(value)}) makes the answer stale`, () => {
      assert.equal(cc(`max-age=${value}`), 0);
    });
  }

  test('max-age without a value makes the answer stale', () => {
    assert.equal(cc('max-age'), 0);
  });

  test('an invalid s-maxage makes the answer stale even with a valid max-age', () => {
    assert.equal(cc('s-maxage=abc, max-age=30'), 0);
  });

  test('an invalid max-age makes the answer stale even with a valid s-maxage (the most restrictive reading)', () => {
    assert.equal(cc('s-maxage=30, max-age=-1'), 0);
  });

  test('max-age given twice with different values is conflicting, so stale, in either order', () => {
    assert.equal(cc('max-age=0, max-age=60'), 0);
    assert.equal(cc('max-age=60, max-age=0'), 0);
    assert.equal(cc('max-age=60, max-age=abc'), 0);
  });

  test('max-age on two field lines with different values is conflicting too', () => {
    assert.equal(cc(['max-age=60', 'max-age=30']), 0);
  });

  test('s-maxage given twice with different values is conflicting', () => {
    assert.equal(cc('s-maxage=60, s-maxage=30'), 0);
  });

  test('the same max-age twice is no conflict', () => {
    assert.equal(cc('max-age=60, max-age="60"'), 60);
  });

  test('s-maxage wins over max-age for a shared cache', () => {
    assert.equal(cc('max-age=5, s-maxage=30'), 30);
    assert.equal(cc('s-maxage=5, max-age=30'), 5);
  });

  test('a comma or directive inside a quoted string is not a directive', () => {
    assert.equal(cc('community="a, max-age=1", max-age=30'), 30);
    assert.equal(cc('community="a \\", max-age=1", max-age=30'), 30, 'an escaped quote does not end the string');
  });
});

describe('upstream Cache-Control: storing and serving stale', () => {
  for (const value of [
    'no-store',
    'private',
    'private="set-cookie"',
    'private="set-cookie, x-user"',
    'no-cache',
    'no-cache="set-cookie"',
    'PRIVATE, max-age=60',
  ]) {
    test(`${value} is not stored by this shared cache`, () => {
      assert.equal(freshnessOf({ 'cache-control': value }, NOW).noStore, true);
    });
  }

  test('public and max-age alone may be stored', () => {
    assert.equal(freshnessOf({ 'cache-control': 'public, max-age=60' }, NOW).noStore, false);
  });

  for (const value of ['must-revalidate', 'proxy-revalidate', 's-maxage=60']) {
    test(`${value} forbids serving the answer stale`, () => {
      assert.equal(freshnessOf({ 'cache-control': `max-age=60, ${value}` }, NOW).staleAllowed, false);
    });
  }

  test('max-age alone allows serving the answer stale', () => {
    assert.equal(freshnessOf({ 'cache-control': 'max-age=60' }, NOW).staleAllowed, true);
  });
});

describe('upstream Expires', () => {
  const at = (offsetSeconds: number): string => new Date(NOW + offsetSeconds * 1000).toUTCString();

  test('Expires minus Date is the lifetime', () => {
    assert.equal(lifetime({ expires: at(30), date: at(0) }), 30);
  });

  test('Expires is measured against the upstream Date, not our clock', () => {
    // The upstream's clock is an hour ahead of ours: its Expires is 30 s after its Date.
    assert.equal(lifetime({ expires: at(3630), date: at(3600) }), 30);
  });

  test('without a Date, Expires is measured against the time the answer arrived', () => {
    assert.equal(lifetime({ expires: at(30) }), 30);
  });

  test('an invalid Date counts as missing', () => {
    assert.equal(lifetime({ expires: at(30), date: 'yesterday' }), 30);
  });

  test('an Expires at or before Date means already expired', () => {
    assert.equal(lifetime({ expires: at(0), date: at(0) }), 0);
    assert.equal(lifetime({ expires: at(-60), date: at(0) }), 0);
  });

  for (const value of ['0', '-1', '2030', 'never', '', 'Sun, 31 Feb 2030 10:00:00 GMT']) {
    test(`an invalid Expires (${JSON.stringify(value)}) means already expired`, () => {
      assert.equal(lifetime({ expires: value, date: at(0) }), 0);
    });
  }

  test('Expires on two field lines means already expired', () => {
    assert.equal(lifetime({ expires: [at(30), at(60)], date: at(0) }), 0);
  });

  test('max-age overrides Expires', () => {
    assert.equal(lifetime({ 'cache-control': 'max-age=20', expires: '0', date: at(0) }), 20);
  });

  test('s-maxage overrides Expires', () => {
    assert.equal(lifetime({ 'cache-control': 's-maxage=20', expires: at(5), date: at(0) }), 20);
  });

  test('Expires applies when Cache-Control has neither max-age nor s-maxage', () => {
    assert.deepEqual(freshnessOf({ 'cache-control': 'public', expires: at(30), date: at(0) }, NOW), { noStore: false, maxAgeSeconds: 30, staleAllowed: true });
  });

  test('an invalid max-age is stale even when Expires is in the future', () => {
    assert.equal(lifetime({ 'cache-control': 'max-age=abc', expires: at(30), date: at(0) }), 0);
  });
});
