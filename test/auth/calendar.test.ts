import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CalendarPeriod, periodAt } from '../../src/auth/calendar.ts';

describe('calendar periods of quotas (UTC)', () => {
  it('a day runs from 00:00 UTC to the next 00:00', () => {
    const p = periodAt('day', Date.UTC(2026, 10, 27, 6, 30));
    assert.equal(p.startMs, Date.UTC(2026, 10, 27));
    assert.equal(p.endMs, Date.UTC(2026, 10, 28));
  });

  it('a month runs from its first day to the first of the next, across a year and in February', () => {
    const dec = periodAt('month', Date.UTC(2026, 11, 31, 23, 59, 59));
    assert.deepEqual([dec.startMs, dec.endMs], [Date.UTC(2026, 11, 1), Date.UTC(2027, 0, 1)]);
    const feb = periodAt('month', Date.UTC(2028, 1, 10));
    assert.equal((feb.endMs - feb.startMs) / 86_400_000, 29);
    assert.equal(periodAt('month', Date.UTC(2027, 0, 1)).id, dec.id + 1);
  });

  it('keeps its period until the clock leaves it, then works out the new one', () => {
    const calendar = new CalendarPeriod('day', Date.UTC(2026, 10, 27, 12));
    const first = calendar.at(Date.UTC(2026, 10, 27, 13));
    assert.equal(calendar.at(Date.UTC(2026, 10, 27, 23, 59)), first);
    assert.equal(calendar.at(Date.UTC(2026, 10, 28)).id, first.id + 1);
  });
});
