/**
 * Requests by route, method and status with their latency, counted as plain numbers. prom-client's
 * own `inc`/`observe` hash the label set on every call, even through a `labels()` child; this
 * costs a map lookup and a few additions per request, and the numbers are handed to prom-client
 * only when /metrics is scraped.
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'OTHER'] as const;

/** Upper bounds of hypergate_http_request_duration_seconds' buckets, in ms (exported in seconds). */
export const LATENCY_BUCKETS_MS: readonly number[] = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/**
 * Upper bounds of http_server_request_duration_seconds' buckets, in ms: the ones the OpenTelemetry
 * HTTP semantic conventions advise for http.server.request.duration (0.005 s to 10 s).
 */
export const SERVER_DURATION_BUCKETS_MS: readonly number[] = [5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];

/**
 * The bounds a cell counts by: both histograms' bounds, merged and sorted. Each histogram's
 * cumulative count at one of its bounds is the cell's cumulative count at the same bound here,
 * so one count per request feeds both.
 */
export const CELL_BOUNDS_MS: readonly number[] = [...new Set([...LATENCY_BUCKETS_MS, ...SERVER_DURATION_BUCKETS_MS])].sort((a, b) => a - b);

/** The index of each of `bounds` in CELL_BOUNDS_MS (every one is there). */
export function cellBoundIndexes(bounds: readonly number[]): readonly number[] {
  return bounds.map((bound) => CELL_BOUNDS_MS.indexOf(bound));
}

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
  /** The route pattern, or 'unmatched' (see `matched`). */
  readonly route: string;
  /** False for the requests that matched no route. */
  readonly matched: boolean;
  readonly method: string;
  readonly status: number;
  count: number;
  /** Sum of latencies, in ms. */
  sumMs: number;
  /** Observations per bucket of CELL_BOUNDS_MS (not cumulative); the last slot is +Inf. */
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

  /** The pattern of a route index; '' for a request no route matched. */
  routePattern(route: number): string {
    return route > UNMATCHED_ROUTE ? (this.#routes[route] ?? '') : '';
  }

  observe(route: number, method: string | undefined, status: number, ms: number): void {
    const cells = (this.#cells[route] ?? this.#cells[UNMATCHED_ROUTE]) as Map<number, StatsCell>;
    const m = methodIndex(method);
    const key = status * 8 + m;
    let cell = cells.get(key);
    if (cell === undefined) {
      cell = {
        route: this.#routes[route] ?? 'unmatched',
        matched: route > UNMATCHED_ROUTE && route < this.#routes.length,
        method: METHODS[m] as string,
        status,
        count: 0,
        sumMs: 0,
        buckets: new Float64Array(CELL_BOUNDS_MS.length + 1),
      };
      cells.set(key, cell);
    }
    cell.count++;
    cell.sumMs += ms;
    let b = 0;
    while (b < CELL_BOUNDS_MS.length && ms > (CELL_BOUNDS_MS[b] as number)) b++;
    cell.buckets[b] = (cell.buckets[b] as number) + 1;
  }

  *cells(): Generator<StatsCell> {
    for (const cells of this.#cells) yield* cells.values();
  }
}
