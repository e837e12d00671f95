import { Histogram, type LabelValues, type MetricObjectWithValues, type MetricType, type MetricValueWithName, type Registry } from 'prom-client';
import { cellBoundIndexes, type RequestStats, type StatsCell } from './request-stats.ts';

/** What one histogram fed from RequestStats is: its name, help, bounds (a subset of CELL_BOUNDS_MS) and each cell's labels. */
export interface StatsHistogramSpec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Upper bounds of its buckets, in ms (exported in seconds); each one is in CELL_BOUNDS_MS. */
  readonly boundsMs: readonly number[];
  /** The labels of one cell's series (never `le`, which the histogram adds). */
  labelsOf(cell: StatsCell): LabelValues<L | 'le'>;
}

/**
 * A request-duration histogram fed from RequestStats at scrape time rather than per request.
 * It keeps prom-client's Histogram type (registry, cluster aggregation) and replaces only `get`.
 */
export class StatsHistogram<L extends string> extends Histogram<L> {
  readonly #stats: RequestStats;
  readonly #spec: StatsHistogramSpec<L>;
  /** Where each of the spec's bounds is among a cell's buckets. */
  readonly #cellIndexes: readonly number[];

  constructor(stats: RequestStats, registry: Registry, spec: StatsHistogramSpec<L>) {
    super({ name: spec.name, help: spec.help, labelNames: spec.labelNames, buckets: spec.boundsMs.map((ms) => ms / 1000), registers: [registry] });
    this.#stats = stats;
    this.#spec = spec;
    this.#cellIndexes = cellBoundIndexes(spec.boundsMs);
  }

  /** The registry's text path calls this one, the cluster aggregator `get`: both give the tallies. */
  getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<L | 'le'>>> {
    return this.get();
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<L | 'le'>>> {
    const { name, help, boundsMs } = this.#spec;
    const base = { name, help, type: 'histogram' as unknown as MetricType, aggregator: 'sum' as const, collect: () => {} };
    const values: MetricValueWithName<L | 'le'>[] = [];
    for (const cell of this.#stats.cells()) {
      const labels = this.#spec.labelsOf(cell);
      let cumulative = 0;
      let next = 0;
      for (let i = 0; i < boundsMs.length; i++) {
        const upTo = this.#cellIndexes[i] as number;
        for (; next <= upTo; next++) cumulative += cell.buckets[next] ?? 0;
        values.push({ labels: { ...labels, le: (boundsMs[i] as number) / 1000 }, value: cumulative, metricName: `${name}_bucket` });
      }
      values.push({ labels: { ...labels, le: '+Inf' }, value: cell.count, metricName: `${name}_bucket` });
      values.push({ labels, value: cell.sumMs / 1000, metricName: `${name}_sum` });
      values.push({ labels, value: cell.count, metricName: `${name}_count` });
    }
    return { ...base, values };
  }
}
