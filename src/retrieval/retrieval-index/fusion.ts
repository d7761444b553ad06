/**
 * @module retrieval/retrieval-index/fusion
 * Calibrated fusion of the lexical and vector rows into one score per document. Per text,
 * the lexical score is normalised by its best candidate and the vector bonus added; a single
 * text is that sum. Multi-intent: each clause ranks on its own, normalised by its best, and a
 * tool keeps its best clause score plus `wholeQueryWeight` × its normalised whole-request
 * score, so every intent reaches the top of the list.
 */
import type { VectorPool } from './vector-pass.ts';

/** Per-text normalisation of the lexical rows: 1 / best (0 without a match), and the best fused score so far. */
export function lexicalScales(lexicalMax: Float64Array): { lexicalScale: Float64Array; textMax: Float64Array } {
  const textCount = lexicalMax.length;
  const lexicalScale = new Float64Array(textCount);
  const textMax = new Float64Array(textCount);
  for (let t = 0; t < textCount; t++) {
    lexicalScale[t] = lexicalMax[t]! > 0 ? 1 / lexicalMax[t]! : 0;
    textMax[t] = lexicalMax[t]! > 0 ? 1 : 0;
  }
  return { lexicalScale, textMax };
}

/** What fusion reads: the rows of every text, their scales and the pools with a vector bonus. */
export interface FusionInput {
  size: number;
  textCount: number;
  mask: Uint8Array | undefined;
  rows: Float32Array;
  bonus: Float32Array;
  lexicalScale: Float64Array;
  textMax: Float64Array;
  pools: readonly VectorPool[];
  wholeQueryWeight: number;
}

/**
 * Writes every document's fused score into `final` (0 for non-candidates) and, for a request
 * with clauses, the clause each score came from into `bestClause` (clause spread reads it).
 */
export function fuseScores(input: FusionInput, final: Float32Array, bestClause: Uint16Array): void {
  const { size, textCount, mask, rows, bonus, lexicalScale, textMax } = input;
  const wholeBonusScale = textCount === 1 ? 1 : textMax[0]! > 0 ? input.wholeQueryWeight / textMax[0]! : 0;
  const wholeScale = lexicalScale[0]! * wholeBonusScale;
  const clauseBonusScale = new Float64Array(textCount);
  const clauseScale = new Float64Array(textCount);
  for (let t = 1; t < textCount; t++) {
    clauseBonusScale[t] = textMax[t]! > 0 ? 1 / textMax[t]! : 0;
    clauseScale[t] = lexicalScale[t]! * clauseBonusScale[t]!;
  }
  // Lexical part for every candidate first; the few documents with a vector bonus after.
  for (let d = 0; d < size; d++) {
    if (mask !== undefined && mask[d] !== 1) {
      final[d] = 0;
      continue;
    }
    let best = 0;
    let from = 0;
    for (let t = 1, at = size + d; t < textCount; t++, at += size) {
      const value = rows[at]! * clauseScale[t]!;
      if (value > best) {
        best = value;
        from = t;
      }
    }
    final[d] = rows[d]! * wholeScale + best;
    bestClause[d] = from;
  }
  for (const { documents } of input.pools) {
    for (let p = 0; p < documents.length; p++) {
      const d = documents[p]!;
      let best = 0;
      let from = 0;
      for (let t = 1, at = size + d; t < textCount; t++, at += size) {
        const value = rows[at]! * clauseScale[t]! + bonus[at]! * clauseBonusScale[t]!;
        if (value > best) {
          best = value;
          from = t;
        }
      }
      final[d] = rows[d]! * wholeScale + bonus[d]! * wholeBonusScale + best;
      bestClause[d] = from;
    }
  }
}
