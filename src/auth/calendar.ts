import type { QuotaPeriod } from '../config/types.ts';

/** One calendar period in UTC: a day from 00:00, or a month from its first day. */
export interface Period {
  /** Days, or months, since 1970 (UTC): the same period on every instance. */
  readonly id: number;
  readonly startMs: number;
  readonly endMs: number;
}

const DAY_MS = 86_400_000;

/** The period of `per` that holds `nowMs`. */
export function periodAt(per: QuotaPeriod, nowMs: number): Period {
  if (per === 'day') {
    const id = Math.floor(nowMs / DAY_MS);
    return { id, startMs: id * DAY_MS, endMs: (id + 1) * DAY_MS };
  }
  const at = new Date(nowMs);
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  return { id: (year - 1970) * 12 + month, startMs: Date.UTC(year, month, 1), endMs: Date.UTC(year, month + 1, 1) };
}

/** The current period of one kind, worked out again only when the clock leaves it (no Date per request). */
export class CalendarPeriod {
  readonly per: QuotaPeriod;
  #current: Period;

  constructor(per: QuotaPeriod, nowMs: number) {
    this.per = per;
    this.#current = periodAt(per, nowMs);
  }

  at(nowMs: number): Period {
    const current = this.#current;
    if (nowMs >= current.startMs && nowMs < current.endMs) return current;
    return (this.#current = periodAt(this.per, nowMs));
  }
}
