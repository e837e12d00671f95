import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorable, localFreshness, remainingSeconds, staleSeconds, upstreamFreshness, wasStored, withinStaleWindow } from '../../src/cache/freshness.ts';
import { Representation } from '../../src/cache/representation.ts';

const NOW = 1_800_000_000_000;
const NONE = { noStore: false, maxAgeSeconds: null, staleAllowed: true };

describe('freshness arithmetic', () => {
  it('gives a resource made here the configured lifetime from now', () => {
    assert.deepEqual(localFreshness(NOW, 60), { storedAtMs: NOW, expiresAtMs: NOW + 60_000, cacheControl: 'max-age=60', storable: true, staleAllowed: true });
  });

  it('lets the upstream shorten our lifetime but never lengthen it', () => {
    assert.equal(upstreamFreshness({ ...NONE, maxAgeSeconds: 10 }, 0, 60, NOW).cacheControl, 'max-age=10');
    assert.equal(upstreamFreshness({ ...NONE, maxAgeSeconds: 600 }, 0, 60, NOW).cacheControl, 'max-age=60');
    assert.equal(upstreamFreshness(NONE, 0, 60, NOW).expiresAtMs, NOW + 60_000);
  });

  it("dates the version back by the upstream's Age, so it expires that much sooner", () => {
    const f = upstreamFreshness({ ...NONE, maxAgeSeconds: 30 }, 20, 60, NOW);
    assert.equal(f.storedAtMs, NOW - 20_000);
    assert.equal(f.expiresAtMs, NOW + 10_000);
    assert.equal(f.cacheControl, 'max-age=30');
  });

  it('says no-store and keeps nothing when the upstream forbids storing, and carries whether it may answer stale', () => {
    const f = upstreamFreshness({ noStore: true, maxAgeSeconds: null, staleAllowed: false }, 0, 60, NOW);
    assert.equal(f.cacheControl, 'no-store');
    assert.equal(f.storable, false);
    assert.equal(f.staleAllowed, false);
    assert.equal(isStorable(f, NOW), false);
  });

  it('keeps an answer only while it is fresh: not one stale on arrival (max-age=0)', () => {
    assert.equal(isStorable(upstreamFreshness(NONE, 0, 60, NOW), NOW), true);
    assert.equal(isStorable(upstreamFreshness({ ...NONE, maxAgeSeconds: 0 }, 0, 60, NOW), NOW), false);
    assert.equal(isStorable(localFreshness(NOW, 60), NOW + 60_000), false);
  });

  it('reads back from a representation whether it was stored when it arrived', () => {
    const kept = new Representation('{}', 'application/json', 'max-age=60', NOW, NOW + 60_000);
    const noStore = new Representation('{}', 'application/json', 'no-store', NOW, NOW + 60_000);
    const staleOnArrival = new Representation('{}', 'application/json', 'max-age=0', NOW, NOW);
    assert.equal(wasStored(kept, NOW), true);
    assert.equal(wasStored(noStore, NOW), false);
    assert.equal(wasStored(staleOnArrival, NOW), false);
  });

  it('lets an expired entry answer only within a stale window past its expiry, and counts how long it has been stale', () => {
    const entry = { expiresAtMs: NOW };
    assert.equal(withinStaleWindow(entry, NOW + 29_999, 30_000), true);
    assert.equal(withinStaleWindow(entry, NOW + 30_000, 30_000), false);
    assert.equal(staleSeconds(entry, NOW + 12_999), 12);
  });

  it('gives the remaining freshness in whole seconds, negative once stale (RFC 9211 ttl)', () => {
    const rep = new Representation('{}', 'application/json', 'max-age=60', NOW, NOW + 60_000);
    assert.equal(remainingSeconds(rep, NOW + 15_500), 45);
    assert.equal(remainingSeconds(rep, NOW + 75_000), -15);
  });
});
