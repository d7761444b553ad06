/**
 * @module selection/retrieval
 * The retrieval slice the pipeline needs (stage 4, seed 001 §5.4), so any index can plug in:
 * the retrieval service's hybrid index (`createRetrievalIndex` from `src/retrieval`) fits
 * this interface as it is. `createLexicalRetrieval` is a self-contained BM25F fallback over
 * the retrieval module's tokenizer and index, used when no index is given: relevance only,
 * no embedder, no I/O.
 */
import { buildLexicalIndex, type LexicalIndex, type WeightedTerm } from '../retrieval/lexical-index.ts';
import { documentFields, fieldNames, type RetrievalDocument } from '../retrieval/document.ts';
import { functionWords, terms } from '../retrieval/tokenizer.ts';

export type { RetrievalDocument } from '../retrieval/document.ts';

/** One hit: a document id and its relevance (higher is better). */
export interface RetrievalHit {
  id: string;
  score: number;
}

/** Options of a search. */
export interface RetrievalSearchOptions {
  k: number;
  /** Only these ids may be returned. */
  candidateIds?: ReadonlySet<string>;
  /** Per-result rank diagnostics; the pipeline never needs them (they cost O(size) in the retrieval service's index). */
  includeRanks?: boolean;
}

/** A searchable index over tool documents. */
export interface SelectionRetrieval {
  /** Replaces the whole corpus. */
  build(documents: readonly RetrievalDocument[]): void | Promise<void>;
  /** Adds or replaces documents (optional: without it the pipeline rebuilds). */
  upsert?(documents: readonly RetrievalDocument[]): void | Promise<void>;
  /** Removes documents by id (optional). */
  remove?(ids: readonly string[]): void | Promise<void>;
  /** Best `k` documents for `query`, restricted to `candidateIds` when given. */
  search(query: string, options: RetrievalSearchOptions): { results: RetrievalHit[]; warnings?: string[] } | Promise<{ results: RetrievalHit[]; warnings?: string[] }>;
  /** A short name for metadata (`lexical`, `hybrid`…). */
  readonly method?: string;
}

// Field weights: the name and summary say most about a tool; parameter text least.
const FIELD_WEIGHTS: Record<(typeof fieldNames)[number], { weight: number; b: number }> = {
  name: { weight: 3, b: 0.5 },
  summary: { weight: 2, b: 0.75 },
  description: { weight: 1, b: 0.75 },
  whenToUse: { weight: 1.5, b: 0.75 },
  tags: { weight: 1.5, b: 0.5 },
  parameterNames: { weight: 0.5, b: 0.75 },
  parameterDescriptions: { weight: 0.3, b: 0.75 },
  examples: { weight: 1.5, b: 0.75 },
  extra: { weight: 0.3, b: 0.75 },
};
const FUNCTION_WORD_WEIGHT = 0.15;

/** A BM25F retrieval over tool documents with no embedder (the offline fallback). */
export function createLexicalRetrieval(): SelectionRetrieval {
  let documents = new Map<string, RetrievalDocument>();
  let ids: string[] = [];
  let index: LexicalIndex | undefined;
  let scores = new Float32Array(0);

  function rebuild(): void {
    ids = [...documents.keys()];
    const fielded = ids.map((id) => {
      const fields = documentFields(documents.get(id)!);
      return fieldNames.map((field) => terms(fields[field]));
    });
    index = buildLexicalIndex(fielded, fieldNames.map((field) => FIELD_WEIGHTS[field]), 1.2);
    scores = new Float32Array(ids.length);
  }

  return {
    method: 'lexical',
    build(next) {
      documents = new Map(next.map((document) => [document.id, document]));
      index = undefined;
    },
    upsert(next) {
      for (const document of next) documents.set(document.id, document);
      index = undefined;
    },
    remove(removed) {
      for (const id of removed) documents.delete(id);
      index = undefined;
    },
    search(query, options) {
      if (index === undefined) rebuild();
      const weights = new Map<string, number>();
      for (const term of terms(query)) {
        const weight = functionWords.has(term) ? FUNCTION_WORD_WEIGHT : 1;
        weights.set(term, Math.max(weights.get(term) ?? 0, weight));
      }
      const weighted: WeightedTerm[] = [...weights].map(([term, weight]) => ({ term, weight }));
      scores.fill(0);
      index!.accumulate(weighted, scores);
      // Bounded insertion into a best-first array of size k: O(n + hits · k).
      const k = Math.max(0, Math.floor(options.k));
      const topIndex: number[] = [];
      const topScore: number[] = [];
      const candidates = options.candidateIds;
      for (let i = 0; i < scores.length; i++) {
        const score = scores[i]!;
        if (score <= 0) continue;
        if (topScore.length === k && score <= topScore[k - 1]!) continue;
        if (candidates !== undefined && !candidates.has(ids[i]!)) continue;
        let at = topScore.length;
        while (at > 0 && topScore[at - 1]! < score) at--;
        topScore.splice(at, 0, score);
        topIndex.splice(at, 0, i);
        if (topScore.length > k) {
          topScore.pop();
          topIndex.pop();
        }
      }
      return { results: topIndex.map((i, rank) => ({ id: ids[i]!, score: topScore[rank]! })) };
    },
  };
}
