/**
 * @module retrieval/retrieval-index/lexical-pass
 * The lexical scoring pass: one walk over the postings scores every text of a request into
 * its row, and the same pass over the rows finds each row's best candidate score and, when
 * the vectors rerank only the best lexical hits, offers each candidate to that text's pool,
 * so neither needs a pass of its own.
 */
import type { LexicalIndex } from '../lexical-index.ts';
import type { TopKCollector } from '../top-k.ts';
import type { QueryAnalysis } from './query-analysis.ts';

/**
 * Fills `rows` (text t's scores at `[t·size, (t+1)·size)`, zero on entry) and returns each
 * text's best candidate score. `collectors[t]`, when given, receives text t's candidates
 * with a positive score.
 */
export function scoreLexically(
  lexical: LexicalIndex,
  analysis: QueryAnalysis,
  size: number,
  mask: Uint8Array | undefined,
  rows: Float32Array,
  collectors: TopKCollector[] | undefined,
  /** Adds the caller's learned example field to rows `from`… once the postings are in (learned-field.ts). */
  addLearned?: (rows: Float32Array, from: number) => void,
): Float64Array {
  const textCount = analysis.texts.length;
  const lexicalMax = new Float64Array(textCount);
  if (textCount > 1 && analysis.wholeIsSum) {
    // The clauses partition the request's words and BM25 is linear in the query term
    // weights, so the whole request's row is the sum of the clause rows: every posting
    // is read once and added once.
    lexical.accumulateRows(analysis.terms.slice(1), rows.subarray(size));
    addLearned?.(rows, 1);
    sumClauseRows(size, textCount, mask, rows, lexicalMax, collectors);
    return lexicalMax;
  }
  lexical.accumulateRows(analysis.terms, rows);
  addLearned?.(rows, 0);
  for (let t = 0; t < textCount; t++) {
    let best = 0;
    const collector = collectors?.[t];
    let floor = Number.NEGATIVE_INFINITY;
    for (let d = 0, at = t * size; d < size; d++, at++) {
      const value = rows[at]!;
      if (!(value > 0) || (mask !== undefined && mask[d] !== 1)) continue;
      if (value > best) best = value;
      if (collector !== undefined && value >= floor) {
        collector.offer(d);
        floor = collector.worst;
      }
    }
    lexicalMax[t] = best;
  }
  return lexicalMax;
}

/** One pass that writes the whole request's row as the sum of the clause rows and finds each row's best. */
function sumClauseRows(
  size: number,
  textCount: number,
  mask: Uint8Array | undefined,
  rows: Float32Array,
  lexicalMax: Float64Array,
  collectors: TopKCollector[] | undefined,
): void {
  const worst = new Float64Array(textCount).fill(Number.NEGATIVE_INFINITY);
  for (let d = 0; d < size; d++) {
    const candidate = mask === undefined || mask[d] === 1;
    let sum = 0;
    for (let t = 1, at = size + d; t < textCount; t++, at += size) {
      const value = rows[at]!;
      sum += value;
      if (!candidate) continue;
      if (value > lexicalMax[t]!) lexicalMax[t] = value;
      if (collectors !== undefined && value > 0 && value >= worst[t]!) {
        collectors[t]!.offer(d);
        worst[t] = collectors[t]!.worst;
      }
    }
    rows[d] = sum;
    if (!candidate) continue;
    // The best is kept unrounded; the pool compares the stored (Float32) value, as topK does.
    if (sum > lexicalMax[0]!) lexicalMax[0] = sum;
    const stored = rows[d]!;
    if (collectors !== undefined && stored > 0 && stored >= worst[0]!) {
      collectors[0]!.offer(d);
      worst[0] = collectors[0]!.worst;
    }
  }
}
