import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CacheEntry, etagFor, type Validator } from '../../src/cache/cache-entry.ts';
import { Representation } from '../../src/cache/representation.ts';
import { FORMATS, JSON_INDEX } from '../../src/hypermedia/formats.ts';

const HAL_INDEX = FORMATS.findIndex((f) => f.contentType === 'application/hal+json');
const BODY = '{"id":"7","name":"Ada","status":"active","links":{"self":"/api/customers/7","orders":"/api/customers/7/orders"}}';
const times = { storedAtMs: 1_700_000_000_123, expiresAtMs: 1_700_000_060_123, staleAllowed: true };

function jsonEntry(validator: Validator | null, etag = etagFor(validator, JSON_INDEX)): CacheEntry {
  const rep = new Representation(BODY, 'application/json', 'max-age=60', times.storedAtMs, times.expiresAtMs, 'Accept', times.staleAllowed, etag);
  return new CacheEntry([rep], times, [], null, validator);
}

const render = (body: string, contentType: string, like: Representation, etag: string | undefined): Representation =>
  new Representation(body, contentType, like.cacheControl, like.storedAtMs, like.expiresAtMs, like.vary, like.staleAllowed, etag);

/**
 * The entry's compact layout (issue 13, item 2): no validator object, no array of formats and no
 * times of its own are kept, so each is read back from what is kept, and must read back the same.
 */
describe('a cache entry gives back what it was made from', () => {
  for (const upstream of ['"v7"', 'W/"v7"', '"a.b"', '""']) {
    test(`the upstream's validator ${upstream}, kept only through the JSON ETag derived from it, and the HAL ETag derived from it again`, () => {
      const validator = { upstream, suffixes: ['jsonsufx', 'halsuffx'] };
      const entry = jsonEntry(validator);
      assert.deepEqual(entry.validator, validator);
      const withHal = entry.withFormat(HAL_INDEX, render);
      assert.ok(withHal !== null);
      assert.equal(withHal.variant(HAL_INDEX)?.etag, etagFor(validator, HAL_INDEX));
      assert.deepEqual(withHal.validator, validator);
    });
  }

  test('a validator the JSON ETag does not carry (a shared-tier record written so) is kept as given', () => {
    const validator = { upstream: '"v8"', suffixes: ['jsonsufx', 'halsuffx'] };
    const entry = jsonEntry(validator, '"something-else"');
    assert.deepEqual(entry.validator, validator);
    assert.equal(entry.withFormat(HAL_INDEX, render)?.variant(HAL_INDEX)?.etag, etagFor(validator, HAL_INDEX));
  });

  test('no validator stays none: the ETags are digests of the bodies', () => {
    const entry = jsonEntry(null);
    assert.equal(entry.validator, null);
    assert.match(entry.variant(JSON_INDEX)?.etag ?? '', /^"[\w-]{27}"$/);
  });

  test('its times and staleness are the ones it was stored with, and it holds JSON alone until another format is asked for', () => {
    const entry = jsonEntry(null);
    assert.equal(entry.storedAtMs, times.storedAtMs);
    assert.equal(entry.expiresAtMs, times.expiresAtMs);
    assert.equal(entry.staleAllowed, true);
    assert.equal(entry.formatCount, 1);
    assert.equal(entry.variant(HAL_INDEX), undefined);
    const withHal = entry.withFormat(HAL_INDEX, render);
    assert.equal(withHal?.formatCount, 2);
    assert.equal(withHal?.variant(JSON_INDEX), entry.variant(JSON_INDEX));
    assert.equal(withHal?.expiresAtMs, times.expiresAtMs);
    assert.ok((withHal?.byteLength ?? 0) > entry.byteLength);
  });

  test('a cached absence keeps its own times, never answers stale, and has no format to render', () => {
    const absence = new CacheEntry([], { storedAtMs: 5_000, expiresAtMs: 15_000, staleAllowed: true }, ['/api/customers'], null);
    assert.equal(absence.absent, true);
    assert.equal(absence.storedAtMs, 5_000);
    assert.equal(absence.expiresAtMs, 15_000);
    assert.equal(absence.staleAllowed, false);
    assert.equal(absence.formatCount, 0);
    assert.equal(absence.variant(JSON_INDEX), undefined);
    assert.equal(absence.withFormat(HAL_INDEX, render), null);
    assert.deepEqual(absence.groups, ['/api/customers']);
  });
});
