import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sameValue } from '../../src/lib/same-value.ts';

describe('sameValue: equality of config values', () => {
  test('a section with its keys in another order is the same section', () => {
    assert.equal(sameValue({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 }), true);
  });

  test('a list in another order is another list', () => {
    assert.equal(sameValue(['10.0.0.1', '10.0.0.2'], ['10.0.0.2', '10.0.0.1']), false);
  });

  test('a changed, added or removed key is a change', () => {
    assert.equal(sameValue({ a: 1 }, { a: 2 }), false);
    assert.equal(sameValue({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(sameValue({ a: 1, b: 2 }, { a: 1 }), false);
  });

  test('a key whose value is undefined counts as absent, as in JSON', () => {
    assert.equal(sameValue({ a: 1, b: undefined }, { a: 1 }), true);
  });

  test('null, a list and a section are different values', () => {
    assert.equal(sameValue(null, {}), false);
    assert.equal(sameValue([], {}), false);
    assert.equal(sameValue({}, []), false);
    assert.equal(sameValue(null, undefined), false);
    assert.equal(sameValue('1', 1), false);
  });

  test('lists of sections compare each section whatever its key order', () => {
    assert.equal(sameValue([{ a: 1, b: 2 }], [{ b: 2, a: 1 }]), true);
    assert.equal(sameValue([{ a: 1 }], [{ a: 1 }, { a: 1 }]), false);
  });
});
