import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { CursorSeal } from '../../src/resources/cursor-seal.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('a sealed cursor', () => {
  test('opens in the one spelling the gateway wrote, and in no other spelling of the same MAC bytes', () => {
    const seal = new CursorSeal(randomBytes(32));
    const token = seal.seal('payers', 'cus_0004');
    assert.equal(seal.open('payers', token), 'cus_0004');
    // The MAC's last base64url character carries spare bits: every other character there must be refused,
    // including those that decode to the same 16 bytes (a second spelling of one cursor).
    const last = token.at(-1) ?? '';
    let sameBytes = 0;
    for (const c of ALPHABET) {
      if (c === last) continue;
      const other = token.slice(0, -1) + c;
      if (Buffer.from(other.slice(other.indexOf('.') + 1), 'base64url').equals(Buffer.from(token.slice(token.indexOf('.') + 1), 'base64url'))) sameBytes++;
      assert.equal(seal.open('payers', other), null, other);
    }
    assert.ok(sameBytes > 0, 'the alphabet holds other spellings of the same bytes, and each was refused');
  });

  test('is refused under another scope', () => {
    const seal = new CursorSeal(randomBytes(32));
    assert.equal(seal.open('issues', seal.seal('payers', 'cus_0004')), null);
  });
});
