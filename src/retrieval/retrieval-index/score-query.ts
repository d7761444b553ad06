/**
 * @module retrieval/retrieval-index/score-query
 * Scores one analysed request against a snapshot: the lexical pass (every text in one walk
 * over the postings), the vector pass over each text's pool, then fusion. Returns the fused
 * score row, which is a scratch buffer of the snapshot: read it before the next search.
 */
import { TopKCollector } from '../top-k.ts';
import { fuseScores, lexicalScales } from './fusion.ts';
import { addLearnedField, type LearnedExampleField } from './learned-field.ts';
import { scoreLexically } from './lexical-pass.ts';
import type { QueryAnalysis } from './query-analysis.ts';
import { reserveRows } from './scratch.ts';
import type { RetrievalSettings } from './settings.ts';
import type { Snapshot } from './snapshot.ts';
import { addVectorBonus, clearVectorBonus, type VectorPool } from './vector-pass.ts';

/** Where the whole request's raw scores go, for lexicalRank / vectorRank (undefined: not wanted). */
export interface RankSinks {
  lexical: Float32Array | undefined;
  vector: Map<number, number> | undefined;
}

/** The fused score of every document for the request (0 for non-candidates). */
export function scoreQuery(
  view: Snapshot,
  analysis: QueryAnalysis,
  queryVectors: Float32Array[] | undefined,
  mask: Uint8Array | undefined,
  ranks: RankSinks,
  settings: RetrievalSettings,
  learned?: LearnedExampleField,
): Float32Array {
  const size = view.documents.length;
  const textCount = analysis.texts.length;
  const { rows, bonus, similarities, final, bestClause } = reserveRows(view.scratch, size, textCount);
  const { matrix, scales } = view;
  const useVectors = queryVectors !== undefined && matrix !== undefined && scales !== undefined && settings.vectorWeight > 0;
  // The vectors' pools (each text's best lexical hits) are picked during the lexical pass.
  const collectors =
    useVectors && Number.isFinite(settings.vectorDepth)
      ? Array.from({ length: textCount }, (_, t) => new TopKCollector(settings.vectorDepth, rows, t * size, view.idOrder))
      : undefined;
  const addLearned = learned ? (target: Float32Array, from: number) => addLearnedField(learned, view, settings, analysis.terms, target, from) : undefined;
  const lexicalMax = scoreLexically(view.lexical, analysis, size, mask, rows, collectors, addLearned);
  if (ranks.lexical) ranks.lexical.set(rows.subarray(0, size));
  const { lexicalScale, textMax } = lexicalScales(lexicalMax);
  let pools: VectorPool[] = [];
  if (useVectors) {
    pools = addVectorBonus({
      size, matrix, scales, hasVector: view.hasVector, queryVectors, mask, collectors, vectorWeight: settings.vectorWeight,
      rows, lexicalScale, bonus, textMax, similarities, wholeSimilarities: ranks.vector,
    });
  }
  fuseScores({ size, textCount, mask, rows, bonus, lexicalScale, textMax, pools, wholeQueryWeight: settings.wholeQueryWeight }, final, bestClause);
  clearVectorBonus(bonus, pools, size);
  return final;
}
