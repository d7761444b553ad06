/**
 * @module test/telemetry/prometheus
 * The Prometheus text-format parser the tests check `/metrics` with (parse-prometheus-text-format,
 * a port of the Python client's parser; it ships no types, so its output shape is declared here),
 * and lookups over what it returns. That parser flattens a histogram into one unlabelled sample
 * (labelled histograms lose their labels, count and sum), so per-series histogram figures are read
 * by `histogramSeries`, which parses the same text again with histogram families declared
 * untyped: every `_bucket`, `_sum` and `_count` line is then its own labelled sample.
 */
import { createRequire } from 'node:module';

/** One parsed sample: a value, or a histogram's buckets, count and sum. */
export interface ParsedSample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

/** One parsed family. */
export interface ParsedFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: ParsedSample[];
}

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => ParsedFamily[];

/** Parses exposition text; throws on anything the parser refuses. */
export function parsePrometheus(text: string): ParsedFamily[] {
  return parse(text);
}

/** The family called `name`, or throws naming the families there are. */
export function family(families: readonly ParsedFamily[], name: string): ParsedFamily {
  const found = families.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no metric ${name}; have ${families.map((f) => f.name).join(', ')}`);
  return found;
}

/** The samples of a family whose labels include `labels`. */
export function samples(found: ParsedFamily, labels: Record<string, string> = {}): ParsedSample[] {
  return found.metrics.filter((sample) => Object.entries(labels).every(([name, value]) => sample.labels?.[name] === value));
}

/** Sum of the values (counters, gauges) or counts (histograms) of the matching samples. */
export function total(found: ParsedFamily, labels: Record<string, string> = {}): number {
  return samples(found, labels).reduce((sum, sample) => sum + Number(found.type === 'HISTOGRAM' ? sample.count : sample.value), 0);
}

/** A labelled histogram series: cumulative buckets by `le`, count and sum (from a second, untyped parse). */
export function histogramSeries(text: string, name: string, labels: Record<string, string> = {}): { buckets: Record<string, number>; count: number; sum: number } {
  const untyped = parse(text.replace(new RegExp(`^# TYPE ${name} histogram$`, 'm'), `# TYPE ${name} untyped`));
  const matching = (suffix: string) =>
    untyped.filter((f) => f.name === `${name}${suffix}`).flatMap((f) => samples(f, labels));
  const buckets: Record<string, number> = {};
  for (const sample of matching('_bucket')) {
    const bound = sample.labels?.le ?? '';
    buckets[bound] = (buckets[bound] ?? 0) + Number(sample.value);
  }
  const sumOf = (suffix: string) => matching(suffix).reduce((sum, sample) => sum + Number(sample.value), 0);
  return { buckets, count: sumOf('_count'), sum: sumOf('_sum') };
}
