import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HgError } from '../../src/lib/errors.ts';
import { routableTarget } from '../../src/http/request-target.ts';

describe('routableTarget', () => {
  test('an absolute-form target becomes its path and query; an empty path is "/" (RFC 9112 section 3.2.1)', () => {
    const cases: Array<[string, string]> = [
      ['http://h/api/customers/1', '/api/customers/1'],
      ['HTTPS://h:8443/api/customers?offset=0&limit=5', '/api/customers?offset=0&limit=5'],
      ['http://h', '/'],
      ['http://h:', '/'],
      ['http://h?offset=1', '/?offset=1'],
      ['http://h//x', '//x'],
      ['http://[fe80::1%25eth0]:8080/x', '/x'],
      ['http://[v1.fe]/x', '/x'],
      ["http://a.b-c_d~e!$&'()*+,;=%41/x", '/x'],
    ];
    for (const [target, routed] of cases) assert.equal(routableTarget(target), routed, target);
  });

  test('an origin-form target is given back as it is, query included', () => {
    assert.equal(routableTarget('/'), '/');
    assert.equal(routableTarget('/api/customers?offset=4&limit=2'), '/api/customers?offset=4&limit=2');
    assert.equal(routableTarget('//x'), '//x');
  });

  test('a target beginning with "*" is left as it is', () => {
    assert.equal(routableTarget('*'), '*');
    assert.equal(routableTarget('*/x'), '*/x');
  });

  test('anything else is a 400 bad-request HgError', () => {
    for (const target of [
      '',
      'ftp://h/',
      'http:/h',
      'h/x',
      'http://u@h/',
      'http://h/x#f',
      'http://',
      'http://[::1',
      'http://[]',
      'http://[::1]x/',
      'http://h%4/',
      'http://h%4',
      'http://h:1a/',
    ]) {
      assert.throws(
        () => routableTarget(target),
        (err: unknown) => err instanceof HgError && err.status === 400 && err.code === 'HG_ERR_BAD_REQUEST',
        target,
      );
    }
  });
});
