/**
 * @module retrieval/retrieval-index/search
 * One search: analyse the request (memoised), embed its texts (memoised, failing open), then,
 * synchronously so concurrent searches cannot interleave on the scratch buffers, filter the
 * candidates, score, demote by anti-patterns and removal tools, take the top k and explain their ranks.
 */
import type { Embedder } from '../embedders/embedder.ts';
import { topK } from '../top-k.ts';
import { demoteRemovalTools } from './action-intent.ts';
import { demoteByAntiPatterns } from './anti-patterns.ts';
import type { BoundedMemo } from './bounded-memo.ts';
import { candidateMask } from './candidate-mask.ts';
import type { QueryAnalysis } from './query-analysis.ts';
import { spreadClauses } from './clause-spread.ts';
import { pullPlanSteps } from './plan-steps.ts';
import { embedQueryTexts } from './query-vectors.ts';
import { rankOf } from './ranks.ts';
import { scoreQuery } from './score-query.ts';
import type { RetrievalSettings } from './settings.ts';
import type { Snapshot } from './snapshot.ts';
import type { RetrievalResult, RetrievalSearchResult, SearchOptions } from './types.ts';

/** How many of the best tools clause spread reorders (30 and more measured alike; the k of a selection is below it). */
const clauseSpreadDepth = 30;

/** What a search needs from the index. */
export interface SearchContext {
  settings: RetrievalSettings;
  embedder: Embedder | undefined;
  /** True when tool vectors are available. */
  hasVectors(): boolean;
  /** Warnings of the last build, copied into every answer. */
  buildWarnings(): readonly string[];
  analyse(query: string): QueryAnalysis;
  queryVectors: BoundedMemo<Float32Array[]>;
  /** The current snapshot (rebuilt when stale). */
  snapshot(): Snapshot;
}

/** Ranks the index's tools for a query. */
export async function search(context: SearchContext, query: string, options: SearchOptions = {}): Promise<RetrievalSearchResult> {
  const { settings, embedder } = context;
  const k = options.k ?? 10;
  const warnings = [...context.buildWarnings()];
  const analysis = context.analyse(query);
  let queryVectors: Float32Array[] | undefined;
  if (embedder && context.hasVectors() && settings.vectorWeight > 0) {
    queryVectors = await embedQueryTexts(embedder, query, analysis.texts, context.queryVectors, warnings, options.signal);
  }
  // From here on everything is synchronous, so concurrent searches cannot interleave.
  const view = context.snapshot();
  const mask = options.candidateIds ? candidateMask(view.masks, view.positionOf, view.documents.length, options.candidateIds) : undefined;
  const includeRanks = options.includeRanks ?? true;
  const wholeLexical = includeRanks ? new Float32Array(view.documents.length) : undefined;
  const wholeVector = includeRanks && queryVectors ? new Map<number, number>() : undefined;
  const final = scoreQuery(view, analysis, queryVectors, mask, { lexical: wholeLexical, vector: wholeVector }, settings, options.learned);
  if (view.antiPatterns && settings.antiPatternPenalty > 0) {
    demoteByAntiPatterns(final, view.antiPatterns, analysis.ownTerms, settings.antiPatternPenalty, settings.antiPatternThreshold);
  }
  if (view.removalTools) demoteRemovalTools(final, view.removalTools, analysis.ownTerms, settings.removalPenalty);
  // Plan steps read the best few tools after every demotion, so a demoted tool pulls nothing.
  // One pass finds the best tools both steps read: plan steps the first 3, clause spread all of them
  // (with any producer plan steps pulled in, re-sorted by the new scores).
  const spread = analysis.texts.length > 2 && settings.clauseSpread > 0;
  if (view.planSteps || spread) {
    let head = topK(final, spread ? clauseSpreadDepth : 3, view.idOrder, mask, 0);
    const pulled = view.planSteps ? pullPlanSteps(final, view.planSteps, query, head, mask) : [];
    if (spread) {
      if (pulled.length > 0) {
        head = [...new Set([...head, ...pulled])].sort((a, b) => final[b]! - final[a]! || view.idOrder[a]! - view.idOrder[b]!);
      }
      spreadClauses(final, head, view.scratch.bestClause, settings.clauseSpread);
    }
  }
  const results = topK(final, k, view.idOrder, mask, 0).map((d) => {
    const result: RetrievalResult = { id: view.documents[d]!.id, score: final[d]! };
    if (!wholeLexical) return result;
    const lexicalRank = rankOf(wholeLexical, d, view.idOrder, mask);
    if (lexicalRank !== undefined) result.lexicalRank = lexicalRank;
    const vectorRank = wholeVector && wholeVector.size > 0 ? rankOf(wholeVector, d, view.idOrder, mask) : undefined;
    if (vectorRank !== undefined) result.vectorRank = vectorRank;
    return result;
  });
  return { results, warnings };
}
