/**
 * @module selection/replay/windows
 * Metrics of a replayed stream per window of consecutive interactions (issue #13), so a user
 * sees the ranking change with use. Each interaction is scored on the ranking the selection
 * actually offered (at most K tools), with the `quiver eval` definitions (retrieval/eval/
 * metrics.ts): recall@k over the query's gold items and the reciprocal rank within the offer.
 */
import { queryMetrics, type RelevantItems } from '../../retrieval/eval/metrics.ts';

/** The cut-offs a replay window reports (those above K equal recall@K). */
export const replayRecallKs = [1, 3, 5] as const;

/** One scored interaction. */
export interface ScoredInteraction {
  recall: Map<number, number>;
  /** 1 when every gold item was offered within each cut-off. */
  completeness: Map<number, number>;
  /** The request has more than one gold item (a multi-tool request). */
  multi: boolean;
  reciprocalRank: number;
  /** The simulated model called a gold tool. */
  calledGold: boolean;
  /** The noise credited a wrong tool. */
  noisy: boolean;
}

/** Metrics of one window: interactions `from` to `to` (1-based, inclusive). */
export interface ReplayWindow {
  from: number;
  to: number;
  n: number;
  'recall@1': number;
  'recall@3': number;
  'recall@5': number;
  /** Share of interactions with every gold item in the top 5 (Comp@5; a single-tool request: its recall@5). */
  'comp@5': number;
  mrr: number;
  /** Share of interactions where the model called a gold tool (it was offered). */
  called: number;
  /** Share of interactions whose outcome the noise credited to a wrong tool. */
  noisy: number;
}

/** Scores one interaction from the offered ranking and the query's gold items. */
export function scoreInteraction(offered: readonly string[], items: RelevantItems, outcome: { calledGold: boolean; noisy: boolean }): ScoredInteraction {
  const metrics = queryMetrics(offered, items, replayRecallKs);
  return { recall: metrics.recall, completeness: metrics.completeness, multi: items.length > 1, reciprocalRank: metrics.reciprocalRank, calledGold: outcome.calledGold, noisy: outcome.noisy };
}

const round = (value: number): number => Number(value.toFixed(4));

/** Averages a run of interactions into one window. */
export function summarizeWindow(scored: readonly ScoredInteraction[], from: number): ReplayWindow {
  const n = scored.length;
  const mean = (pick: (s: ScoredInteraction) => number): number => (n === 0 ? 0 : round(scored.reduce((sum, s) => sum + pick(s), 0) / n));
  return {
    from,
    to: from + n - 1,
    n,
    'recall@1': mean((s) => s.recall.get(1) ?? 0),
    'recall@3': mean((s) => s.recall.get(3) ?? 0),
    'recall@5': mean((s) => s.recall.get(5) ?? 0),
    'comp@5': mean((s) => s.completeness.get(5) ?? 0),
    mrr: mean((s) => s.reciprocalRank),
    called: mean((s) => (s.calledGold ? 1 : 0)),
    noisy: mean((s) => (s.noisy ? 1 : 0)),
  };
}

/** Splits a stream's scored interactions into windows of `size` (the last may be shorter). */
export function windowsOf(scored: readonly ScoredInteraction[], size: number): ReplayWindow[] {
  const windows: ReplayWindow[] = [];
  for (let start = 0; start < scored.length; start += size) windows.push(summarizeWindow(scored.slice(start, start + size), start + 1));
  return windows;
}
