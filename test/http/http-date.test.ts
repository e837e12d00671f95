import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseHttpDate } from '../../src/protocol/http-date.ts';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37);

describe('HTTP-date', () => {
  test('the IMF-fixdate form is read as UTC', () => {
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW), NOV_6_1994);
  });

  test('the obsolete RFC 850 form is read, its two-digit year placed within 50 years of now', () => {
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW), NOV_6_1994);
    assert.equal(parseHttpDate('Monday, 06-Nov-34 08:49:37 GMT', NOW), Date.UTC(2034, 10, 6, 8, 49, 37));
  });

  test('the obsolete asctime form is read as UTC, with its space-padded day', () => {
    assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', NOW), NOV_6_1994);
  });

  test('a leap second is the instant after second 59', () => {
    assert.equal(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT', NOW), Date.UTC(2017, 0, 1, 0, 0, 0));
  });

  for (const text of [
    '0',
    '2030',
    '-1',
    '',
    'Sun, 06 Nov 1994 08:49:37',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'sun, 06 nov 1994 08:49:37 gmt',
    'Sun, 31 Feb 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    '1994-11-06T08:49:37Z',
  ]) {
    test(`${JSON.stringify(text)} is not an HTTP-date`, () => {
      assert.equal(parseHttpDate(text, NOW), null);
    });
  }
});
