import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { andThen } from '../../src/lib/sync-or-promise.ts';

describe('andThen: a value now or a promise of it', () => {
  test('a value that is here is passed on at once, without a promise', () => {
    const out = andThen(2, (n) => n * 3);
    assert.equal(out, 6);
  });

  test('a promise is passed on once it fulfils', async () => {
    const out = andThen(Promise.resolve(2), (n) => n * 3);
    assert.ok(out instanceof Promise);
    assert.equal(await out, 6);
  });

  test('a rejection is passed on, and next is not called', async () => {
    let called = false;
    const out = andThen(Promise.reject(new Error('no')), () => {
      called = true;
    });
    await assert.rejects(Promise.resolve(out), /no/);
    assert.equal(called, false);
  });
});
