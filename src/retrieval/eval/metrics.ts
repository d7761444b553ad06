/**
 * @module retrieval/eval/metrics
 * Retrieval metrics of the `quiver eval` contract (DESIGN §5, seed 001 §6.8). A query's
 * relevant items are its gold groups: with `gold_groups` each inner list is one item
 * satisfied by any member; without, each gold id is its own item. A retrieved id counts
 * for at most one item, and an item counts once, however many members are retrieved.
 */
import { percentile } from '../../core/stats.ts';

/** The relevant items of one query: each is a set of interchangeable tool ids. */
export type RelevantItems = readonly (readonly string[])[];

/** Metrics of one query. */
export interface QueryMetrics {
  /** recall@k for each k asked. */
  recall: Map<number, number>;
  /** comp@k (1 when every item is in the top k) for each k asked. */
  completeness: Map<number, number>;
  ndcg10: number;
  reciprocalRank: number;
}

/** For each rank position, the index of the item it newly satisfies, or -1. */
function satisfiedItems(ranking: readonly string[], items: RelevantItems): Int32Array {
  const itemOf = new Map<string, number[]>();
  items.forEach((members, index) => {
    for (const id of members) {
      const list = itemOf.get(id);
      if (list) list.push(index);
      else itemOf.set(id, [index]);
    }
  });
  const done = new Uint8Array(items.length);
  const result = new Int32Array(ranking.length).fill(-1);
  ranking.forEach((id, rank) => {
    const candidates = itemOf.get(id);
    if (!candidates) return;
    // A tool in several groups satisfies the first open one.
    for (const index of candidates) {
      if (!done[index]) {
        done[index] = 1;
        result[rank] = index;
        return;
      }
    }
  });
  return result;
}

/** Computes recall@k and comp@k for every k in `ks`, nDCG@10 (binary gains) and the reciprocal rank. */
export function queryMetrics(ranking: readonly string[], items: RelevantItems, ks: readonly number[]): QueryMetrics {
  const satisfied = satisfiedItems(ranking, items);
  const total = items.length;
  const recall = new Map<number, number>();
  const completeness = new Map<number, number>();
  for (const k of ks) {
    let found = 0;
    for (let rank = 0; rank < Math.min(k, satisfied.length); rank++) if (satisfied[rank]! >= 0) found++;
    recall.set(k, total === 0 ? 0 : found / total);
    completeness.set(k, total > 0 && found === total ? 1 : 0);
  }
  let dcg = 0;
  for (let rank = 0; rank < Math.min(10, satisfied.length); rank++) {
    if (satisfied[rank]! >= 0) dcg += 1 / Math.log2(rank + 2);
  }
  let ideal = 0;
  for (let rank = 0; rank < Math.min(10, total); rank++) ideal += 1 / Math.log2(rank + 2);
  let reciprocalRank = 0;
  for (let rank = 0; rank < satisfied.length; rank++) {
    if (satisfied[rank]! >= 0) {
      reciprocalRank = 1 / (rank + 1);
      break;
    }
  }
  return { recall, completeness, ndcg10: ideal === 0 ? 0 : dcg / ideal, reciprocalRank };
}

/** The latency percentile `quiver eval` reports: linear interpolation (0 when there are no queries). */
export function latencyPercentile(sorted: readonly number[], q: number): number {
  return percentile(sorted, q, 'linear') ?? 0;
}

/** Running means of query metrics. */
export interface MetricTotals {
  n: number;
  recall: Map<number, number>;
  completeness: Map<number, number>;
  ndcg10: number;
  mrr: number;
}

/** Averages per-query metrics (0 for every metric when there are no queries). */
export function averageMetrics(all: readonly QueryMetrics[], ks: readonly number[]): MetricTotals {
  const n = all.length;
  const mean = (pick: (m: QueryMetrics) => number): number => (n === 0 ? 0 : all.reduce((sum, m) => sum + pick(m), 0) / n);
  const recall = new Map<number, number>();
  const completeness = new Map<number, number>();
  for (const k of ks) {
    recall.set(k, mean((m) => m.recall.get(k) ?? 0));
    completeness.set(k, mean((m) => m.completeness.get(k) ?? 0));
  }
  return { n, recall, completeness, ndcg10: mean((m) => m.ndcg10), mrr: mean((m) => m.reciprocalRank) };
}
