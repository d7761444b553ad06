/**
 * @module telemetry/metrics/registry
 * A small metrics registry: counters, gauges and histograms with fixed buckets, each with a
 * fixed list of label names and a cap on its series (label-value combinations). A metric past
 * its cap folds new combinations into one series whose every label is `_other`, so a tool or
 * plugin name can never grow the exposition without bound. Label values are cut to 120
 * characters. Nothing here formats text: `exposition.ts` renders what `snapshot()` returns.
 *
 * Hot path: `inc` / `observe` build one string key and do one Map lookup; a histogram finds its
 * bucket by a linear scan over a dozen bounds. Scrape-time values (process counts, breaker
 * states, cache totals) come from `onCollect` callbacks that run before each snapshot.
 *
 * @example
 * const registry = new MetricsRegistry();
 * const calls = registry.counter({ name: 'quiver_tool_calls_total', help: 'Tool calls.', labelNames: ['outcome'] });
 * calls.inc({ outcome: 'success' });
 */

/** Label values by label name. */
export type Labels = Readonly<Record<string, string | number | undefined>>;

/** What every metric is declared with. */
export interface MetricOptions {
  /** Prometheus name: [a-zA-Z_:][a-zA-Z0-9_:]*. */
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** Most series kept; later new combinations fold into the `_other` series (default 500). */
  maxSeries?: number;
}

/** The value folded label combinations get once a metric holds its most series. */
export const OVERFLOW_LABEL = '_other';
const MAX_LABEL_LENGTH = 120;
const NAME_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Default latency buckets in seconds: 1 ms to 10 s, for requests, searches and calls. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One series of a metric as the exposition reads it. */
export interface SeriesSnapshot {
  labels: Record<string, string>;
  /** Counter / gauge value. */
  value: number;
  /** Histogram only: per-bucket counts (not cumulative), sum and count. */
  buckets?: number[];
  sum?: number;
  count?: number;
}

/** One metric family as the exposition reads it. */
export interface FamilySnapshot {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** Histogram only: the upper bounds, ascending (+Inf implied). */
  bounds?: readonly number[];
  series: SeriesSnapshot[];
}

interface Series {
  labels: Record<string, string>;
  value: number;
  buckets?: number[];
  sum?: number;
  count?: number;
}

abstract class Metric {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly #maxSeries: number;
  protected readonly series = new Map<string, Series>();

  constructor(options: MetricOptions) {
    if (!NAME_PATTERN.test(options.name)) throw new RangeError(`invalid metric name '${options.name}'`);
    for (const label of options.labelNames ?? []) {
      if (!LABEL_PATTERN.test(label) || label.startsWith('__') || label === 'le') throw new RangeError(`invalid label name '${label}' on ${options.name}`);
    }
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    this.#maxSeries = Math.max(1, options.maxSeries ?? 500);
  }

  /** The series for these labels, created on first use (or the overflow series past the cap). */
  protected seriesFor(labels: Labels | undefined): Series {
    // The hot path: one string key, no arrays, one Map lookup.
    const names = this.labelNames;
    let key = '';
    for (let index = 0; index < names.length; index++) key += (index === 0 ? '' : '\u0000') + cleanLabelValue(labels?.[names[index]!]);
    const found = this.series.get(key);
    if (found) return found;
    const values = names.map((name) => cleanLabelValue(labels?.[name]));
    const overflowKey = this.labelNames.map(() => OVERFLOW_LABEL).join('\u0000');
    const full = this.series.size >= this.#maxSeries;
    const useKey = full ? overflowKey : key;
    const existing = this.series.get(useKey);
    if (existing) return existing;
    const created = this.newSeries(Object.fromEntries(this.labelNames.map((name, index) => [name, full ? OVERFLOW_LABEL : values[index]!])));
    this.series.set(useKey, created);
    return created;
  }

  protected newSeries(labels: Record<string, string>): Series {
    return { labels, value: 0 };
  }

  /** Drops every series (scrape-time gauges rebuild theirs on each collect). */
  reset(): void {
    this.series.clear();
  }

  abstract snapshot(): FamilySnapshot;
}

function cleanLabelValue(value: string | number | undefined): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : String(value);
  return text.length > MAX_LABEL_LENGTH ? text.slice(0, MAX_LABEL_LENGTH) : text;
}

/** A monotonically increasing count. */
export class Counter extends Metric {
  /** Adds `value` (default 1; negative values are ignored: counters never go down). */
  inc(labels?: Labels, value = 1): void {
    if (!(value > 0)) return;
    this.seriesFor(labels).value += value;
  }

  /** Sets the running total read from elsewhere (a cache's own hit count) at collect time. */
  setTotal(labels: Labels | undefined, total: number): void {
    if (Number.isFinite(total)) this.seriesFor(labels).value = total;
  }

  snapshot(): FamilySnapshot {
    return { name: this.name, help: this.help, type: 'counter', series: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })) };
  }
}

/** A value that goes up and down. */
export class Gauge extends Metric {
  set(labels: Labels | undefined, value: number): void {
    this.seriesFor(labels).value = value;
  }

  inc(labels?: Labels, value = 1): void {
    this.seriesFor(labels).value += value;
  }

  dec(labels?: Labels, value = 1): void {
    this.seriesFor(labels).value -= value;
  }

  snapshot(): FamilySnapshot {
    return { name: this.name, help: this.help, type: 'gauge', series: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })) };
  }
}

/** A distribution over fixed buckets (Prometheus classic histogram). */
export class Histogram extends Metric {
  readonly bounds: readonly number[];

  constructor(options: MetricOptions & { buckets?: readonly number[] }) {
    super(options);
    const bounds = [...(options.buckets ?? LATENCY_BUCKETS_SECONDS)].filter((bound) => Number.isFinite(bound));
    for (let index = 1; index < bounds.length; index++) {
      if (!(bounds[index]! > bounds[index - 1]!)) throw new RangeError(`buckets of ${options.name} must ascend strictly`);
    }
    this.bounds = Object.freeze(bounds);
  }

  protected override newSeries(labels: Record<string, string>): Series {
    return { labels, value: 0, buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  /** Records one observation (seconds for latency histograms). NaN is ignored. */
  observe(labels: Labels | undefined, value: number): void {
    if (Number.isNaN(value)) return;
    const series = this.seriesFor(labels);
    let index = 0;
    while (index < this.bounds.length && value > this.bounds[index]!) index++;
    series.buckets![index]! += 1;
    series.sum! += value;
    series.count! += 1;
  }

  snapshot(): FamilySnapshot {
    return {
      name: this.name,
      help: this.help,
      type: 'histogram',
      bounds: this.bounds,
      series: [...this.series.values()].map((s) => ({ labels: s.labels, value: 0, buckets: [...s.buckets!], sum: s.sum!, count: s.count! })),
    };
  }
}

/** Holds metrics by name and runs scrape-time collectors before a snapshot. */
export class MetricsRegistry {
  readonly #metrics = new Map<string, Metric>();
  readonly #collectors: Array<() => void> = [];

  counter(options: MetricOptions): Counter {
    return this.#add(new Counter(options));
  }

  gauge(options: MetricOptions): Gauge {
    return this.#add(new Gauge(options));
  }

  histogram(options: MetricOptions & { buckets?: readonly number[] }): Histogram {
    return this.#add(new Histogram(options));
  }

  /** Runs `collect` before every snapshot (read a process count, a cache's totals); returns an unsubscribe. */
  onCollect(collect: () => void): () => void {
    this.#collectors.push(collect);
    return () => {
      const index = this.#collectors.indexOf(collect);
      if (index >= 0) this.#collectors.splice(index, 1);
    };
  }

  /** Every family after running the collectors; a collector that throws is skipped (metrics fail open). */
  snapshot(): FamilySnapshot[] {
    for (const collect of this.#collectors) {
      try {
        collect();
      } catch {
        // A broken source must not take the whole scrape down; its series keep their last values.
      }
    }
    return [...this.#metrics.values()].map((metric) => metric.snapshot());
  }

  #add<M extends Metric>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new RangeError(`metric ${metric.name} is already registered`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }
}
