import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { averageMetrics, latencyPercentile, queryMetrics } from './metrics.ts';

const close = (actual: number, expected: number): void => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);

describe('retrieval metrics', () => {
  it('computes recall, completeness, nDCG@10 and reciprocal rank for plain gold ids', () => {
    const m = queryMetrics(['x', 'a', 'y', 'b', 'z'], [['a'], ['b'], ['c']], [1, 3, 5]);
    close(m.recall.get(1)!, 0);
    close(m.recall.get(3)!, 1 / 3);
    close(m.recall.get(5)!, 2 / 3);
    assert.equal(m.completeness.get(5), 0);
    close(m.reciprocalRank, 1 / 2);
    const dcg = 1 / Math.log2(3) + 1 / Math.log2(5);
    const ideal = 1 + 1 / Math.log2(3) + 1 / Math.log2(4);
    close(m.ndcg10, dcg / ideal);
  });

  it('counts a gold group once, satisfied by any member', () => {
    // Two items: {a, a2} and {b}. Both members of the first group are retrieved.
    const m = queryMetrics(['a2', 'a', 'b'], [['a', 'a2'], ['b']], [1, 2, 3]);
    close(m.recall.get(1)!, 1 / 2);
    close(m.recall.get(2)!, 1 / 2);
    close(m.recall.get(3)!, 1);
    assert.equal(m.completeness.get(2), 0);
    assert.equal(m.completeness.get(3), 1);
    close(m.reciprocalRank, 1);
    const ideal = 1 + 1 / Math.log2(3);
    close(m.ndcg10, (1 + 1 / Math.log2(4)) / ideal);
  });

  it('gives zeros when nothing relevant is retrieved, and ignores hits past rank 10 for nDCG', () => {
    const ranking = Array.from({ length: 12 }, (_, i) => `t${i}`);
    const m = queryMetrics(ranking, [['t11']], [10]);
    assert.equal(m.recall.get(10), 0);
    assert.equal(m.ndcg10, 0);
    close(m.reciprocalRank, 1 / 12);
  });

  it('averages over queries and interpolates percentiles', () => {
    const a = queryMetrics(['a'], [['a']], [1]);
    const b = queryMetrics(['x'], [['a']], [1]);
    const totals = averageMetrics([a, b], [1]);
    assert.equal(totals.n, 2);
    close(totals.recall.get(1)!, 0.5);
    close(totals.mrr, 0.5);
    close(latencyPercentile([1, 2, 3, 4], 0.5), 2.5);
    assert.equal(latencyPercentile([], 0.5), 0);
    assert.equal(averageMetrics([], [1]).recall.get(1), 0);
  });
});
