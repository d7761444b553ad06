/**
 * @module retrieval/retrieval-index/types
 * The public contract of the retrieval index: what `build`, `upsert` and `search` take and
 * return. `retrieval-index.ts` re-exports these.
 */
import type { RetrievalDocument } from '../document.ts';
import type { LearnedExampleField } from './learned-field.ts';

/** One ranked tool. */
export interface RetrievalResult {
  id: string;
  score: number;
  /** 1-based rank of the tool in the whole-query lexical ranking (absent when it had no lexical match). */
  lexicalRank?: number;
  /** 1-based rank of the tool by whole-query vector similarity (absent without vectors). */
  vectorRank?: number;
}

/** A search's answer: ranked tools and any degradation the caller should know about. */
export interface RetrievalSearchResult {
  results: RetrievalResult[];
  warnings: string[];
}

/** Options of one search. */
export interface SearchOptions {
  /** How many tools to return (default 10). */
  k?: number;
  /**
   * Restricts results to these tool ids (selection applies policy before retrieval). Treated
   * as immutable: its mask over the index is cached by Set identity (and size), so callers
   * that reuse one Set per visible set (selection's page-set cache) pay O(size) once.
   */
  candidateIds?: ReadonlySet<string>;
  /** Report lexicalRank / vectorRank per result (default true; costs O(size) per result). */
  includeRanks?: boolean;
  signal?: AbortSignal;
  /** The caller's learned requests, scored as its tools' example field (issue #25; `learned-field.ts`). */
  learned?: LearnedExampleField;
}

/** Options of `build` and `upsert`. */
export interface BuildOptions {
  /** Vectors already computed by the same embedder (e.g. read from pgvector), by tool id. */
  vectors?: ReadonlyMap<string, Float32Array>;
  /**
   * False: documents without a given vector are not embedded here (they rank lexically until
   * the background worker stores their vectors). A slow model must not make a search wait for
   * the catalog (issue #25). Default true.
   */
  embedMissing?: boolean;
  signal?: AbortSignal;
}

/** The index. */
export interface RetrievalIndex {
  /** Number of indexed tools. */
  readonly size: number;
  /** True when tool vectors are available for ranking. */
  readonly hasVectors: boolean;
  /** Warnings from the last build/upsert (e.g. the embedder failed). */
  readonly warnings: readonly string[];
  /** Replaces the whole index with these documents. */
  build(documents: readonly RetrievalDocument[], options?: BuildOptions): Promise<void>;
  /** Adds or replaces documents; only they are embedded. */
  upsert(documents: readonly RetrievalDocument[], options?: BuildOptions): Promise<void>;
  /** Removes documents by id (unknown ids are ignored). */
  remove(ids: readonly string[]): void;
  /** Ranks tools for a query. */
  search(query: string, options?: SearchOptions): Promise<RetrievalSearchResult>;
  /** The vector held for a tool, if any: dequantised from the index's int8 row (a new array each call). */
  vectorOf(id: string): Float32Array | undefined;
}
