import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { duplicateMember } from '../../src/resources/json-duplicates.ts';

describe('a member name given twice in one JSON object', () => {
  test('bodies whose objects name each member once have none, whatever they nest', () => {
    for (const text of ['{}', '[]', '"x"', '1', '{"a":1,"b":{"a":2,"b":[{"a":3},{"a":4}]},"c":"a,\\"a\\":"}', ' { "a" : [ 1 , { "a" : 1 } ] } ', '[{"a":1},{"a":1}]']) {
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
