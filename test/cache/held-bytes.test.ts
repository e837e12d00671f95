import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CacheEntry } from '../../src/cache/cache-entry.ts';
import { heldBytes } from '../../src/cache/held-bytes.ts';
import { Representation } from '../../src/cache/representation.ts';
import { entryBytes } from '../../src/cache/response-cache.ts';

const charged = (body: string): number => heldBytes(body, Buffer.byteLength(body));

describe('what a body is charged against the byte bounds of the caches', () => {
  test('ASCII and Latin-1 text (one byte a character in V8) is charged its UTF-8 length, never less', () => {
    assert.equal(charged('{"name":"Ada"}'), 14);
    assert.equal(charged('é'.repeat(100)), 200, 'Latin-1 past ASCII: UTF-8 takes two bytes, V8 one');
  });

  test('text with one character past U+00FF is kept at two bytes a character: charged that, not its UTF-8 length', () => {
    const body = `${'x'.repeat(1000)}Ω`;
    assert.equal(Buffer.byteLength(body), 1002);
    assert.equal(charged(body), 2002);
    assert.equal(charged('€'.repeat(100)), 300, 'three UTF-8 bytes each is more than two in memory');
  });

  test('a cache entry holding such a body is charged its two bytes a character', () => {
    const ascii = `{"name":"${'a'.repeat(1000)}"}`;
    const wide = `{"name":"${'a'.repeat(999)}Ω"}`;
    const entry = (body: string): CacheEntry =>
      new CacheEntry(
        [new Representation(body, 'application/json', 'max-age=60', 0, 60_000)],
        { storedAtMs: 0, expiresAtMs: 60_000, staleAllowed: true },
        [],
        null,
      );
    const difference = entryBytes('/api/customers/1', entry(wide)) - entryBytes('/api/customers/1', entry(ascii));
    assert.equal(difference, wide.length, 'the wide body costs one more byte per character than the ASCII one');
  });
});
