/**
 * @module selection/retrieval
 * The retrieval slice the pipeline needs (stage 4, seed 001 §5.4), so any index can plug in:
 * the retrieval service's hybrid index (`createRetrievalIndex` from `src/retrieval`) fits
 * this interface through `adaptRetrievalIndex`. `createLexicalRetrieval` is that index without
 * an embedder, used when no index is given: relevance only, no I/O.
 */
import type { RetrievalDocument } from '../retrieval/document.ts';
import { createRetrievalIndex, type LearnedExampleField, type RetrievalIndex } from '../retrieval/retrieval-index.ts';

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
  /** The caller's organisation (`null`: none): whose learned examples may shape the ranking (issue #13). Undefined: none may. */
  orgId?: string | null;
  /** The organisation's learned requests as its tools' example field (issue #25); set by the learning wrapper, read by the index. */
  learned?: LearnedExampleField;
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

/**
 * Adapts the retrieval service's index to the pipeline's slice. The index honours
 * `candidateIds` itself; the pipeline re-checks visibility anyway.
 */
export function adaptRetrievalIndex(
  index: RetrievalIndex,
  options: { method: string; build?: (documents: readonly RetrievalDocument[]) => Promise<void> },
): SelectionRetrieval {
  return {
    method: options.method,
    build: options.build ?? ((documents) => index.build(documents)),
    upsert: (documents) => index.upsert(documents),
    remove: (ids) => index.remove(ids),
    async search(query, searchOptions) {
      const found = await index.search(query, {
        k: searchOptions.k,
        ...(searchOptions.candidateIds ? { candidateIds: searchOptions.candidateIds } : {}),
        ...(searchOptions.learned ? { learned: searchOptions.learned } : {}),
        includeRanks: false,
      });
      return { results: found.results.map((hit) => ({ id: hit.id, score: hit.score })), warnings: [...found.warnings] };
    },
  };
}

/** The retrieval service's index without vectors: fielded BM25 with multi-intent clauses, no I/O. */
export function createLexicalRetrieval(): SelectionRetrieval {
  return adaptRetrievalIndex(createRetrievalIndex(), { method: 'lexical' });
}
