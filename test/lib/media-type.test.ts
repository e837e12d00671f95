import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isJsonMediaType, jsonMediaType, mediaTypeOf } from '../../src/lib/media-type.ts';

describe('media types of Content-Type values', () => {
  test('the media type is lower-cased and loses its parameters and spaces', () => {
    assert.equal(mediaTypeOf(' Application/Problem+JSON ; charset=utf-8'), 'application/problem+json');
    assert.equal(mediaTypeOf('text/plain'), 'text/plain');
  });

  test('no value, or repeated values, have no media type', () => {
    assert.equal(mediaTypeOf(undefined), '');
    assert.equal(mediaTypeOf(['application/json', 'text/plain']), '');
  });

  test('application/json and +json types are JSON; others are not', () => {
    assert.equal(isJsonMediaType('application/json'), true);
    assert.equal(isJsonMediaType('application/hal+json'), true);
    assert.equal(isJsonMediaType('text/json'), false);
    assert.equal(isJsonMediaType('application/jsonx'), false);
    assert.equal(isJsonMediaType(''), false);
  });

  test('a JSON body in a charset other than UTF-8 has no usable media type', () => {
    assert.equal(jsonMediaType('application/json; charset="UTF-8"'), 'application/json');
    assert.equal(jsonMediaType('application/merge-patch+json;charset=utf8'), 'application/merge-patch+json');
    assert.equal(jsonMediaType('application/json; charset=latin1'), null);
    assert.equal(jsonMediaType(' ; charset=utf-8'), null);
    assert.equal(jsonMediaType(undefined), null);
  });
});
