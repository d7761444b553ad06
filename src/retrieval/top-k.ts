/**
 * @module retrieval/top-k
 * Selects the k best documents from a score array without sorting all of them: a binary
 * min-heap of size k, ordered by (score desc, id order asc) so ties always break the same
 * way, whatever the insertion order (DESIGN §5: same input, same ranking).
 */

/**
 * Returns the indexes of the k best documents, best first. Only documents with
 * `mask[d] === 1` (when a mask is given) and a score above `minimumScore` are considered.
 */
export function topK(
  scores: Float32Array,
  k: number,
  idOrder: Int32Array,
  mask: Uint8Array | undefined,
  minimumScore = Number.NEGATIVE_INFINITY,
): number[] {
  if (k <= 0) return [];
  const heap = new Int32Array(k);
  let size = 0;
  // Score of the worst kept document once the heap is full: most documents fall below it.
  let worst = Number.NEGATIVE_INFINITY;
  const n = scores.length;
  for (let d = 0; d < n; d++) {
    const score = scores[d]!;
    if (score <= minimumScore || score < worst || (mask !== undefined && mask[d] !== 1)) continue;
    if (size < k) {
      // Sift up: the root is the worst of the kept documents.
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const p = heap[parent]!;
        if (scores[p]! < score || (scores[p] === score && idOrder[p]! > idOrder[d]!)) break;
        heap[i] = p;
        i = parent;
      }
      heap[i] = d;
      if (size === k) worst = scores[heap[0]!]!;
    } else {
      const root = heap[0]!;
      if (score < scores[root]! || (score === scores[root] && idOrder[d]! > idOrder[root]!)) continue;
      // Replace the root and sift down.
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= size) break;
        const right = left + 1;
        let child = left;
        if (right < size) {
          const l = heap[left]!;
          const r = heap[right]!;
          if (scores[r]! < scores[l]! || (scores[r] === scores[l] && idOrder[r]! > idOrder[l]!)) child = right;
        }
        const c = heap[child]!;
        if (score < scores[c]! || (score === scores[c] && idOrder[d]! > idOrder[c]!)) break;
        heap[i] = c;
        i = child;
      }
      heap[i] = d;
      worst = scores[heap[0]!]!;
    }
  }
  return Array.from(heap.subarray(0, size)).sort((a, b) => scores[b]! - scores[a]! || idOrder[a]! - idOrder[b]!);
}

/**
 * The same selection as `topK`, fed one document at a time (in any order) from a pass the
 * caller makes anyway, so picking several rows' best documents needs no pass of its own.
 * Scores are read from `scores[base + d]`; only scores above 0 are kept.
 */
export class TopKCollector {
  private readonly heap: Int32Array;
  private size = 0;
  /** Score of the worst kept document once full; callers may skip offers below it. */
  worst = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly k: number,
    private readonly scores: Float32Array,
    private readonly base: number,
    private readonly idOrder: Int32Array,
  ) {
    this.heap = new Int32Array(Math.max(0, k));
  }

  /** Considers document d (its score must already be stored). */
  offer(d: number): void {
    const { heap, scores, base, idOrder, k } = this;
    const score = scores[base + d]!;
    if (k <= 0 || score <= 0 || score < this.worst) return;
    const size = this.size;
    if (size < k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const p = heap[parent]!;
        if (scores[base + p]! < score || (scores[base + p] === score && idOrder[p]! > idOrder[d]!)) break;
        heap[i] = p;
        i = parent;
      }
      heap[i] = d;
      if (this.size === k) this.worst = scores[base + heap[0]!]!;
      return;
    }
    const root = heap[0]!;
    if (score < scores[base + root]! || (score === scores[base + root] && idOrder[d]! > idOrder[root]!)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = left;
      if (right < size) {
        const l = heap[left]!;
        const r = heap[right]!;
        if (scores[base + r]! < scores[base + l]! || (scores[base + r] === scores[base + l] && idOrder[r]! > idOrder[l]!)) child = right;
      }
      const c = heap[child]!;
      if (score < scores[base + c]! || (score === scores[base + c] && idOrder[d]! > idOrder[c]!)) break;
      heap[i] = c;
      i = child;
    }
    heap[i] = d;
    this.worst = scores[base + heap[0]!]!;
  }

  /** The kept documents, best first. */
  result(): number[] {
    const { scores, base, idOrder } = this;
    return Array.from(this.heap.subarray(0, this.size)).sort((a, b) => scores[base + b]! - scores[base + a]! || idOrder[a]! - idOrder[b]!);
  }
}
