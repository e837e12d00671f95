import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CacheEntry, etagFor } from '../../src/cache/cache-entry.ts';
import { Representation } from '../../src/cache/representation.ts';
import { adoptable, type Expected } from '../../src/cluster/entry-adoption.ts';
import { encodeEntry, isRejection, parseEntry, type SharedRecord } from '../../src/cluster/entry-codec.ts';

const NOW = 1_800_000_000_000;
const PATH = '/api/customers/7';
const SUFFIXES = ['AAAAAAAA', 'BBBBBBBB'];
const expected: Expected = {
  path: PATH,
  shape: { fingerprint: 'fp', maxAgeSeconds: 60, embeddedRel: null, suffixes: SUFFIXES, vary: 'Accept', exposeHeaders: [] },
  groups: [],
  absenceMs: 5000,
};
const body = JSON.stringify({ id: 7, name: 'Seven', links: { self: PATH } });

/** An item entry fetched 10 s ago with max-age=60, as the fetching instance stores it, written to the tier now. */
function written(validator: string | null = '"v7"'): SharedRecord {
  const v = validator === null ? null : { upstream: validator, suffixes: SUFFIXES };
  const rep = new Representation(body, 'application/json', 'max-age=60', NOW - 10_000, NOW + 50_000, 'Accept', true, etagFor(v, 0));
  const payload = encodeEntry(new CacheEntry([rep], { storedAtMs: NOW - 10_000, expiresAtMs: NOW + 50_000, staleAllowed: true }, [], null, v), NOW, PATH, 'fp');
  const record = parseEntry(`${NOW}\n${payload}`);
  assert.ok(!isRejection(record));
  return record;
}

const adopt = (record: SharedRecord, more: Partial<Expected> = {}, readAtMs = NOW) => adoptable(record, { ...expected, ...more }, readAtMs, NOW);
const reason = (result: ReturnType<typeof adopt>): string | null => (result !== null && isRejection(result) ? result.rejected : null);

describe('adopting an entry read from the shared tier', () => {
  test('a genuine entry is adopted with the age, lifetime and ETag it had where it was fetched', () => {
    const entry = adopt(written(), {}, NOW + 2000);
    assert.ok(entry instanceof CacheEntry);
    const json = entry.variant(0) as Representation;
    assert.equal(json.ageAt(NOW), 12);
    assert.equal(json.cacheControl, 'max-age=60');
    assert.equal(json.etag, '"v7.AAAAAAAA"');
    assert.deepEqual(entry.validator, { upstream: '"v7"', suffixes: SUFFIXES });
  });

  test('an entry without a validator gets the ETag of its body, as where it was fetched', () => {
    const entry = adopt(written(null)) as CacheEntry;
    assert.equal(entry.variant(0)?.etag, new Representation(body, 'application/json', 'max-age=60', 0, 1).etag);
  });

  test('an entry whose time is up is no entry (a plain miss, not a rejection)', () => {
    assert.equal(adopt(written(), {}, NOW + 50_000), null);
  });

  test('is refused for another path, another declaration, other groups or another embedded relation', () => {
    assert.equal(reason(adopt(written(), { path: '/api/customers/8' })), 'identity');
    assert.equal(reason(adopt(written(), { shape: { ...expected.shape, fingerprint: 'other' } })), 'declaration');
    assert.equal(reason(adopt(written(), { groups: ['below:/api/customers/1'] })), 'identity');
    assert.equal(reason(adopt(written(), { shape: { ...expected.shape, embeddedRel: 'customers' } })), 'identity');
  });

  test("is refused when its max-age is above the resource's, or its age and time left exceed its max-age", () => {
    assert.equal(reason(adopt(written(), { shape: { ...expected.shape, maxAgeSeconds: 30 } })), 'freshness');
    const record = written();
    assert.equal(reason(adopt({ ...record, meta: { ...record.meta, t: 315_000_000_000 } })), 'freshness');
    assert.equal(reason(adopt({ ...record, meta: { ...record.meta, a: -1 } })), 'freshness');
  });

  test('is refused for a Cache-Control the gateway does not write, or a validator that is not an entity-tag', () => {
    const record = written();
    for (const c of ['max-age=60\r\nX: y', 'public, max-age=60', 'no-store', ''])
      assert.equal(reason(adopt({ ...record, meta: { ...record.meta, c } })), 'header', c);
    assert.equal(reason(adopt({ ...record, meta: { ...record.meta, u: '"v7"\nX: y' } })), 'header');
    assert.equal(reason(adopt(record, { shape: { ...expected.shape, suffixes: null } })), 'identity', 'a validator where the resource keeps none');
  });

  test('is refused for a body that is not a rendered resource, or that is the rendering of another path', () => {
    const record = written();
    assert.equal(reason(adopt({ ...record, body: '{' })), 'body');
    assert.equal(reason(adopt({ ...record, body: '[]' })), 'body');
    assert.equal(reason(adopt({ ...record, body: '{"links":{"self":{"href":1}}}' })), 'body');
    assert.equal(reason(adopt({ ...record, body: JSON.stringify({ links: { self: '/api/customers/8' } }) })), 'identity');
    assert.equal(reason(adopt(record, { shape: { ...expected.shape, embeddedRel: null } })), null);
  });

  test('an absence is checked like a body: its path, and a lifetime within cache.notFoundSeconds', () => {
    const payload = encodeEntry(new CacheEntry([], { storedAtMs: NOW - 1000, expiresAtMs: NOW + 4000, staleAllowed: false }, [], null), NOW, PATH, 'fp');
    const absence = parseEntry(`${NOW}\n${payload}`);
    assert.ok(!isRejection(absence));
    assert.equal((adopt(absence) as CacheEntry).absent, true);
    assert.equal(reason(adopt(absence, { path: '/api/customers/8' })), 'identity');
    assert.equal(reason(adopt(absence, { absenceMs: 0 })), 'freshness', 'an instance that keeps no absences adopts none');
    assert.equal(reason(adopt({ ...absence, body: body })), 'format');
  });

  test('a value that is not of this format or version is refused before anything is read from it', () => {
    const kind = (stored: string): string | null => {
      const r = parseEntry(stored);
      return isRejection(r) ? r.rejected : null;
    };
    assert.equal(kind('not an entry'), 'format');
    assert.equal(kind('x\n{}\n'), 'format');
    assert.equal(kind('1\n[]\n'), 'format');
    assert.equal(kind('1\n{"a":0,"t":1,"s":1,"g":[],"r":null,"e":"\\"x\\"","c":"max-age=60"}\nbody'), 'version', 'the layout before versions');
    assert.equal(kind('1\n{"v":2,"p":"/a"}\n'), 'format');
  });
});
