import { integer, list, section, string } from './rule.ts';

/** The calendar periods a quota counts over, in UTC. */
export const QUOTA_PERIODS = ['day', 'month'] as const;

const QUOTA = section({
  requests: integer({ min: 1, max: Number.MAX_SAFE_INTEGER, doc: 'Requests a subject may make in one period.' }),
  per: string({ oneOf: QUOTA_PERIODS, doc: '`"day"` or `"month"`: calendar periods in UTC (a day starts at 00:00 UTC, a month on its first day).' }),
});

/**
 * plans.<name>: what a consumer may do. The rate is a token bucket per subject (per address for
 * anonymous callers); each quota counts a subject's requests over a calendar period in UTC.
 */
export const PLAN = section({
  requestsPerSecond: integer({ min: 1, max: 1_000_000, doc: "Requests per second one subject of the plan may make (the token bucket's refill)." }),
  burst: integer({ min: 1, max: 1_000_000, default: 20, doc: "Requests one subject may make at once before the rate applies (the token bucket's size)." }),
  quotas: list(QUOTA, {
    default: [],
    doc: 'Quotas over calendar periods in UTC, each `{"requests": 100000, "per": "day" | "month"}`; a request passes only while every quota has room. See [Plans](authentication.md#plans-and-limits-per-route).',
  }),
});

/** resources.<name>.rateLimit, writeRateLimit, routes.<name>.rateLimit: a token bucket per subject (per address for anonymous callers) for that route alone. */
export function routeLimit(doc: string) {
  return section(
    {
      requestsPerSecond: integer({ min: 1, max: 1_000_000, doc: 'Requests per second one subject (or address, for anonymous callers) may make here.' }),
      burst: integer({ min: 1, max: 1_000_000, default: 20, doc: 'Requests at once before the rate applies.' }),
    },
    { nullable: true, default: null, doc },
  );
}
