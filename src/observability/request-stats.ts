/**
 * Requests by route, method and status with their latency, counted as plain numbers. prom-client's
 * own `inc`/`observe` hash the label set on every call, even through a `labels()` child; this
 * costs a map lookup and a few additions per request, and the numbers are handed to prom-client
 * only when /metrics is scraped.
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'OTHER'] as const;

/** Upper bounds of the latency buckets, in ms (exported in seconds). */
export const LATENCY_BUCKETS_MS: readonly number[] = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

function methodIndex(method: string | undefined): number {
  switch (method) {
    case 'GET':
      return 0;
    case 'HEAD':
      return 1;
    case 'POST':
      return 2;
    case 'PUT':
      return 3;
    case 'DELETE':
      return 4;
    case 'PATCH':
      return 5;
    case 'OPTIONS':
      return 6;
    default:
      return 7;
  }
}

export interface StatsCell {
  readonly route: string;
  readonly method: string;
  readonly status: number;
  count: number;
  /** Sum of latencies, in ms. */
  sumMs: number;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly buckets: Float64Array;
}

/** Route index 0 is every request that matched no route. */
export const UNMATCHED_ROUTE = 0;

export class RequestStats {
  readonly #routes: string[] = ['unmatched'];
  readonly #cells: Map<number, StatsCell>[] = [new Map<number, StatsCell>()];

  /** The index of a route pattern, registered once when routes are built. */
  routeIndex(pattern: string): number {
    const known = this.#routes.indexOf(pattern);
    if (known !== -1) return known;
    this.#routes.push(pattern);
    this.#cells.push(new Map());
    return this.#routes.length - 1;
  }

  observe(route: number, method: string | undefined, status: number, ms: number): void {
    const cells = (this.#cells[route] ?? this.#cells[UNMATCHED_ROUTE]) as Map<number, StatsCell>;
    const m = methodIndex(method);
    const key = status * 8 + m;
    let cell = cells.get(key);
    if (cell === undefined) {
      cell = {
        route: this.#routes[route] ?? 'unmatched',
        method: METHODS[m] as string,
        status,
        count: 0,
        sumMs: 0,
        buckets: new Float64Array(LATENCY_BUCKETS_MS.length + 1),
      };
      cells.set(key, cell);
    }
    cell.count++;
    cell.sumMs += ms;
    let b = 0;
    while (b < LATENCY_BUCKETS_MS.length && ms > (LATENCY_BUCKETS_MS[b] as number)) b++;
    cell.buckets[b] = (cell.buckets[b] as number) + 1;
  }

  *cells(): Generator<StatsCell> {
    for (const cells of this.#cells) yield* cells.values();
  }
}
