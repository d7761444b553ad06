/**
 * @module retrieval/retrieval-index/scratch
 * Score buffers reused by every search of one snapshot, so no search allocates size-long
 * arrays. Scoring is synchronous, so one search uses them at a time.
 */

/**
 * The buffers. `rows` holds one lexical score row per query text (whole request, then its
 * clauses), `bonus` the matching vector-score rows, which are zero except at the few reranked
 * documents and are reset by the vector pass's pools after each search.
 */
export interface ScoreScratch {
  rows: Float32Array;
  bonus: Float32Array;
  /** How many texts `rows` and `bonus` have room for. */
  capacity: number;
  /** One similarity per document of a vector pool. */
  similarities: Float32Array;
  /** The fused score row a search returns. */
  final: Float32Array;
  /** Per document, the clause (text index ≥ 1) its fused score came from; 0 for a single text. */
  bestClause: Uint16Array;
}

/** Buffers for `size` documents and up to four query texts. */
export function createScratch(size: number): ScoreScratch {
  return {
    rows: new Float32Array(size * 4),
    bonus: new Float32Array(size * 4),
    capacity: 4,
    similarities: new Float32Array(size),
    final: new Float32Array(size),
    bestClause: new Uint16Array(size),
  };
}

/**
 * Makes room for `textCount` rows (growing by doubling) and zeroes the lexical rows this
 * search uses; the bonus rows are already zero.
 */
export function reserveRows(scratch: ScoreScratch, size: number, textCount: number): ScoreScratch {
  if (scratch.capacity < textCount) {
    scratch.capacity = Math.max(textCount, scratch.capacity * 2);
    scratch.rows = new Float32Array(size * scratch.capacity);
    scratch.bonus = new Float32Array(size * scratch.capacity);
  }
  scratch.rows.fill(0, 0, size * textCount);
  return scratch;
}
