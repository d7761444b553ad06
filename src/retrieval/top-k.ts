/**
 * @module retrieval/top-k
 * Selects the k best documents from a score array without sorting all of them: a binary
 * min-heap of size k, ordered by (score desc, id order asc) so ties always break the same
 * way, whatever the insertion order (DESIGN §5: same input, same ranking).
 */

/** True when document a ranks below document b (lower score, or equal score and later id). */
function ranksBelow(scores: Float32Array, base: number, idOrder: Int32Array, a: number, b: number): boolean {
  const sa = scores[base + a]!;
  const sb = scores[base + b]!;
  return sa < sb || (sa === sb && idOrder[a]! > idOrder[b]!);
}

/** Appends d to a heap of `size` documents (room for one more), keeping the worst at the root. */
function siftUp(heap: Int32Array, size: number, d: number, scores: Float32Array, base: number, idOrder: Int32Array): void {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent]!;
    if (ranksBelow(scores, base, idOrder, p, d)) break;
    heap[i] = p;
    i = parent;
  }
  heap[i] = d;
}

/** Replaces the root (the worst kept document) of a full heap with d, which ranks above it. */
function replaceRoot(heap: Int32Array, size: number, d: number, scores: Float32Array, base: number, idOrder: Int32Array): void {
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= size) break;
    const right = left + 1;
    let child = left;
    if (right < size && ranksBelow(scores, base, idOrder, heap[right]!, heap[left]!)) child = right;
    const c = heap[child]!;
    if (ranksBelow(scores, base, idOrder, d, c)) break;
    heap[i] = c;
    i = child;
  }
  heap[i] = d;
}

/** The heap's documents, best first. */
function bestFirst(heap: Int32Array, size: number, scores: Float32Array, base: number, idOrder: Int32Array): number[] {
  return Array.from(heap.subarray(0, size)).sort((a, b) => scores[base + b]! - scores[base + a]! || idOrder[a]! - idOrder[b]!);
}

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
      siftUp(heap, size++, d, scores, 0, idOrder);
      if (size === k) worst = scores[heap[0]!]!;
    } else {
      if (ranksBelow(scores, 0, idOrder, d, heap[0]!)) continue;
      replaceRoot(heap, size, d, scores, 0, idOrder);
      worst = scores[heap[0]!]!;
    }
  }
  return bestFirst(heap, size, scores, 0, idOrder);
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
    if (this.size < k) {
      siftUp(heap, this.size++, d, scores, base, idOrder);
      if (this.size === k) this.worst = scores[base + heap[0]!]!;
      return;
    }
    if (ranksBelow(scores, base, idOrder, d, heap[0]!)) return;
    replaceRoot(heap, this.size, d, scores, base, idOrder);
    this.worst = scores[base + heap[0]!]!;
  }

  /** The kept documents, best first. */
  result(): number[] {
    return bestFirst(this.heap, this.size, this.scores, this.base, this.idOrder);
  }
}
