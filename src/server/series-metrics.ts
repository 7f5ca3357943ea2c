// A counter and a histogram for the per-request metrics, recorded without garbage.
//
// prom-client's Counter.inc and Histogram.observe validate and hash their labels object on every
// call (a sorted `name:value` string per call): with the label objects a caller builds, about
// 2.5 KB of garbage and 6 µs per API request. Here a caller finds a label combination's series
// once by a key string it builds from the label values, and an observation is a Map lookup and a
// few additions. What the registry prints is prom-client's own formatting: get() and
// getForPromString() return the values in the shape prom-client's Counter and Histogram return
// (metrics.test.ts compares the exposition of both, byte for byte).
import type { Metric, MetricValue, Registry } from 'prom-client';

type Labels = Record<string, string>;

interface HistogramSeries {
  readonly labels: Labels;
  /** Observations per bucket (not cumulative); the last slot holds those above every bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

interface CounterCell {
  readonly labels: Labels;
  value: number;
}

/** A prom-client value as the registry reads it (bucket values also carry the series' labels apart). */
interface ExportedValue {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels?: Labels;
  readonly value: number;
  readonly metricName?: string;
  readonly exemplar?: null;
}

/** A histogram whose series are found by key; see the file comment. */
export class SeriesHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    // The registry takes any object with prom-client's metric methods; its types list only its own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of `key`, if it has one. */
  find(key: string): HistogramSeries | undefined {
    return this.series.get(key);
  }

  /** Adds the series of `key` with its labels, in exposition order. */
  add(key: string, labels: Labels): HistogramSeries {
    const s = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.series.set(key, s);
    return s;
  }

  observe(s: HistogramSeries, value: number): void {
    const b = this.bounds;
    let i = 0;
    // prom-client's findBound: the first bound the value is at or under.
    while (i < b.length && !(value <= b[i]!)) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  getForPromString(): { name: string; help: string; type: 'histogram'; values: ExportedValue[]; aggregator: 'sum' } {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: this.bounds[i]! }, sharedLabels: s.labels, value: acc, metricName: bucket, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's Histogram.get: each value's series labels merged into its own. */
  get(): { name: string; help: string; type: 'histogram'; values: MetricValue<string>[]; aggregator: 'sum' } {
    const data = this.getForPromString();
    const values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return { ...data, values };
  }

  reset(): void {
    this.series = new Map();
  }
}

/** A counter whose cells are found by key and a number (an HTTP code); see the file comment. */
export class SeriesCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private cells = new Map<string, Map<number, CounterCell>>();
  private created: CounterCell[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** Adds 1 to the cell of (`key`, `code`); false when it has none yet (then call add). */
  inc(key: string, code: number): boolean {
    const cell = this.cells.get(key)?.get(code);
    if (cell === undefined) return false;
    cell.value++;
    return true;
  }

  /** Adds the cell of (`key`, `code`) with its labels, in exposition order, at `value`. */
  add(key: string, code: number, labels: Labels, value = 1): void {
    let byCode = this.cells.get(key);
    if (byCode === undefined) {
      byCode = new Map();
      this.cells.set(key, byCode);
    }
    const c = { labels, value };
    byCode.set(code, c);
    this.created.push(c);
  }

  get(): { name: string; help: string; type: 'counter'; values: ExportedValue[]; aggregator: 'sum' } {
    // In first-increment order, as prom-client keeps its cells.
    const values: ExportedValue[] = this.created.map((c) => ({ value: c.value, labels: c.labels }));
    return { help: this.help, name: this.name, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.cells = new Map();
    this.created = [];
  }
}
