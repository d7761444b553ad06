/**
 * @module core/stats
 * The one percentile of Quiver (issue #17: there were four). Two methods, because two kinds of
 * readers rely on them: nearest rank (an observed value; health windows and benchmarks report
 * what a request really took) and linear interpolation between ranks (PostgreSQL's
 * `percentile_cont`, and the latency figures `quiver eval --json` has always printed).
 */

/** How a percentile between two observations is read. */
export type PercentileMethod = 'nearest-rank' | 'linear';

/** The `fraction` (0–1) percentile of ascending `sorted` values; undefined when there are none. */
export function percentile(sorted: readonly number[], fraction: number, method: PercentileMethod = 'nearest-rank'): number | undefined {
  if (sorted.length === 0) return undefined;
  if (method === 'linear') {
    const position = (sorted.length - 1) * Math.min(1, Math.max(0, fraction));
    const lower = Math.floor(position);
    const upper = Math.ceil(position);
    return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower);
  }
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}
