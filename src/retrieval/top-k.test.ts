import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TopKCollector, topK } from './top-k.ts';

describe('top-k', () => {
  it('the collector picks exactly what topK picks, ties broken by id order, in any offer order', () => {
    const n = 500;
    // Few distinct values, so ties are frequent; some zeros and negatives are never kept.
    const scores = Float32Array.from({ length: n }, (_, d) => ((d * 7919) % 13) - 2);
    const idOrder = Int32Array.from({ length: n }, (_, d) => (d * 104_729) % n);
    const mask = Uint8Array.from({ length: n }, (_, d) => (d % 5 === 0 ? 0 : 1));
    for (const k of [1, 3, 30, 1_000]) {
      const expected = topK(scores, k, idOrder, mask, 0);
      const padded = new Float32Array(n * 2);
      padded.set(scores, n);
      const forward = new TopKCollector(k, padded, n, idOrder);
      const backward = new TopKCollector(k, padded, n, idOrder);
      for (let d = 0; d < n; d++) if (mask[d] === 1) forward.offer(d);
      for (let d = n - 1; d >= 0; d--) if (mask[d] === 1) backward.offer(d);
      assert.deepEqual(forward.result(), expected);
      assert.deepEqual(backward.result(), expected);
      assert.ok(expected.every((d) => scores[d]! > 0));
    }
  });
});
