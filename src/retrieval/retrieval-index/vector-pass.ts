/**
 * @module retrieval/retrieval-index/vector-pass
 * The vector pass: for each text of a request, its pool (the best lexical hits, or every
 * candidate when `vectorDepth` is 'all') gets a bonus of `vectorWeight` × similarity
 * normalised by the pool's best similarity. Only pooled documents are touched, so the bonus
 * rows stay zero elsewhere and are reset through the pools (`clearVectorBonus`).
 */
import type { TopKCollector } from '../top-k.ts';
import { quantisedDot } from './quantised-rows.ts';

/** The documents of one text that received a vector bonus. */
export interface VectorPool {
  documents: ArrayLike<number>;
  text: number;
}

/** What the vector pass reads and writes. */
export interface VectorPassInput {
  size: number;
  /** Row-major quantised tool vectors, their scales, and which rows hold one. */
  matrix: Int8Array;
  scales: Float32Array;
  hasVector: Uint8Array;
  /** One query vector per text. */
  queryVectors: readonly Float32Array[];
  mask: Uint8Array | undefined;
  /** Each text's pool of best lexical hits; undefined to pool every candidate. */
  collectors: TopKCollector[] | undefined;
  vectorWeight: number;
  /** Lexical rows and their per-text scale (1 / best lexical score, or 0). */
  rows: Float32Array;
  lexicalScale: Float64Array;
  /** Written: the bonus rows, and each text's best lexical + vector score. */
  bonus: Float32Array;
  textMax: Float64Array;
  /** Scratch of one similarity per pooled document. */
  similarities: Float32Array;
  /** Receives the whole request's similarity per pooled document (for vector ranks). */
  wholeSimilarities: Map<number, number> | undefined;
}

/** Adds the vector bonus rows; returns the pools it wrote, for fusion and the reset. */
export function addVectorBonus(input: VectorPassInput): VectorPool[] {
  const { size, matrix, scales, hasVector, queryVectors, mask, collectors, rows, lexicalScale, bonus, textMax, similarities } = input;
  const pools: VectorPool[] = [];
  let everyCandidate: number[] | undefined;
  for (let t = 0; t < queryVectors.length; t++) {
    const base = t * size;
    let pool: ArrayLike<number>;
    if (collectors !== undefined) pool = collectors[t]!.result();
    else {
      if (!everyCandidate) {
        everyCandidate = [];
        for (let d = 0; d < size; d++) if (mask === undefined || mask[d] === 1) everyCandidate.push(d);
      }
      pool = everyCandidate;
    }
    const vector = queryVectors[t]!;
    const ranks = t === 0 ? input.wholeSimilarities : undefined;
    let vectorMax = 0;
    for (let p = 0; p < pool.length; p++) {
      const d = pool[p]!;
      if (!hasVector[d]) {
        similarities[p] = 0;
        continue;
      }
      const similarity = quantisedDot(matrix, d * vector.length, scales[d]!, vector);
      similarities[p] = similarity;
      ranks?.set(d, similarity);
      if (similarity > vectorMax) vectorMax = similarity;
    }
    if (vectorMax <= 0) continue;
    pools.push({ documents: pool, text: t });
    const vectorScale = input.vectorWeight / vectorMax;
    for (let p = 0; p < pool.length; p++) {
      const similarity = similarities[p]!;
      if (!(similarity > 0)) continue;
      const d = pool[p]!;
      const value = similarity * vectorScale;
      bonus[base + d] = value;
      const total = rows[base + d]! * lexicalScale[t]! + value;
      if (total > textMax[t]!) textMax[t] = total;
    }
  }
  return pools;
}

/** Zeroes the bonus rows the pools wrote, so the next search starts from zeros. */
export function clearVectorBonus(bonus: Float32Array, pools: readonly VectorPool[], size: number): void {
  for (const { documents, text } of pools) {
    const base = text * size;
    for (let p = 0; p < documents.length; p++) bonus[base + documents[p]!] = 0;
  }
}
