import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { duplicateMember, jsonTextProblem } from '../../src/resources/json-text.ts';

describe('a member name given twice in one JSON object', () => {
  test('bodies whose objects name each member once have none, whatever they nest', () => {
    for (const text of [
      '{}',
      '[]',
      '"x"',
      '1',
      '{"a":1,"b":{"a":2,"b":[{"a":3},{"a":4}]},"c":"a,\\"a\\":"}',
      ' { "a" : [ 1 , { "a" : 1 } ] } ',
      '[{"a":1},{"a":1}]',
    ]) {
      assert.equal(duplicateMember(text), null, text);
    }
  });

  test('a repeated name is found at the top, in a nested object and inside an array, with its pointer', () => {
    assert.equal(duplicateMember('{"name":"a","status":"b","name":"c"}'), '/name');
    assert.equal(duplicateMember('{"a":{"x":1,"y":2,"x":3}}'), '/a/x');
    assert.equal(duplicateMember('{"list":[{"k":1},{"k":1,"k":2}]}'), '/list/1/k');
    assert.equal(duplicateMember('[[0],[1,{"q":1,"q":1}]]'), '/1/1/q');
  });

  test('names are compared decoded: an escaped spelling of the same name is a repeat; pointers escape ~ and /', () => {
    assert.equal(duplicateMember('{"status":"a","\\u0073tatus":"b"}'), '/status');
    assert.equal(duplicateMember('{"a/b~c":1,"a\\/b~c":2}'), '/a~1b~0c');
  });

  test('a string value that looks like a name, or holds quotes and braces, is not a member name', () => {
    assert.equal(duplicateMember('{"a":"a","b":"{\\"a\\":1,\\"a\\":2}"}'), null);
  });
});

describe('what a write body must not carry besides repeated names', () => {
  test('nesting past the bound is found at the first container past it, and the scan stops there', () => {
    assert.equal(jsonTextProblem('{"a":[[1]]}', 3), null);
    assert.deepEqual(jsonTextProblem('{"a":[[[1]]]}', 3), { kind: 'depth', pointer: '/a/0/0' });
    assert.deepEqual(jsonTextProblem(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64), { kind: 'depth', pointer: `/${Array(64).fill('0').join('/')}` });
    assert.equal(jsonTextProblem('[]', 1), null);
    assert.equal(jsonTextProblem('1', 0), null);
  });

  test('a lone surrogate escape is found in a value or a name; pairs and escaped backslashes are text', () => {
    assert.deepEqual(jsonTextProblem('{"a":"x\\\\ud800"}', 64), null, 'an escaped backslash before "ud800" is text');
    assert.equal(jsonTextProblem('{"a":"\\ud83d\\ude00","b":"\\u00e9\\n"}', 64), null);
    assert.deepEqual(jsonTextProblem('{"a":"\\ud83d"}', 64), { kind: 'surrogate', pointer: '/a' });
    assert.deepEqual(jsonTextProblem('{"a":"\\ude00\\ud83d"}', 64), { kind: 'surrogate', pointer: '/a' });
    assert.deepEqual(jsonTextProblem('{"a":["ok","\\uD83D\\u0041"]}', 64), { kind: 'surrogate', pointer: '/a/1' });
    assert.deepEqual(jsonTextProblem('{"a":{"\\udfff":1}}', 64), { kind: 'surrogate', pointer: '/a' });
    assert.deepEqual(jsonTextProblem('"\\ud800"', 64), { kind: 'surrogate', pointer: '' });
  });

  test('the first problem in text order is the one reported', () => {
    assert.deepEqual(jsonTextProblem('{"a":1,"a":"\\ud800"}', 64), { kind: 'duplicate', pointer: '/a' });
    assert.deepEqual(jsonTextProblem('{"b":"\\ud800","b":1}', 64), { kind: 'surrogate', pointer: '/b' });
  });
});
