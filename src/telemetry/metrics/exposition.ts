/**
 * @module telemetry/metrics/exposition
 * The Prometheus text exposition format 0.0.4 (what `/metrics` serves): per family a `# HELP`
 * and a `# TYPE` line, then one line per sample; histograms as cumulative `_bucket{le=…}`
 * samples ending in `le="+Inf"`, then `_sum` and `_count`. HELP text escapes `\` and newline;
 * label values escape `\`, `"` and newline.
 */
import type { FamilySnapshot } from './registry.ts';

/** The content type Prometheus expects for this format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** A sample value as Prometheus writes it (+Inf, -Inf, NaN spelled out). */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function labelText(labels: Record<string, string>, extra?: [string, string]): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function histogramLines(family: FamilySnapshot, lines: string[]): void {
  const bounds = family.bounds ?? [];
  for (const series of family.series) {
    const buckets = series.buckets ?? [];
    let cumulative = 0;
    bounds.forEach((bound, index) => {
      cumulative += buckets[index] ?? 0;
      lines.push(`${family.name}_bucket${labelText(series.labels, ['le', formatValue(bound)])} ${cumulative}`);
    });
    cumulative += buckets[bounds.length] ?? 0;
    lines.push(`${family.name}_bucket${labelText(series.labels, ['le', '+Inf'])} ${cumulative}`);
    lines.push(`${family.name}_sum${labelText(series.labels)} ${formatValue(series.sum ?? 0)}`);
    lines.push(`${family.name}_count${labelText(series.labels)} ${series.count ?? 0}`);
  }
}

/** Renders families as Prometheus text (ends with a newline, as the format requires). */
export function renderPrometheus(families: readonly FamilySnapshot[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    if (family.type === 'histogram') histogramLines(family, lines);
    else for (const series of family.series) lines.push(`${family.name}${labelText(series.labels)} ${formatValue(series.value)}`);
  }
  return `${lines.join('\n')}\n`;
}
