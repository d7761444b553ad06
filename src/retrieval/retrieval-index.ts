/**
 * @module retrieval/retrieval-index
 * The hybrid retrieval index other parts use (DESIGN §3.3): BM25F over fielded text, dense
 * vectors from a pluggable Embedder (Tool2Vec for tools with examples), calibrated score
 * fusion, clause-level ranking for multi-intent requests, and demotion by anti-patterns.
 *
 * Relevance fails open (DESIGN §3.4): when the embedder cannot embed the catalog or the
 * query, search ranks lexically and says so in `warnings`. The index holds everything in
 * memory; the database stays the truth (callers pass persisted vectors to `build`).
 *
 * This file assembles the parts in `retrieval-index/`: `settings`, `document-store` (documents,
 * vectors, failing open), `snapshot` (what scoring reads, rebuilt lazily after writes),
 * `query-analysis` (clauses, terms, near-synonyms), `search` with `candidate-mask`,
 * `score-query` (`lexical-pass`, `vector-pass`, `fusion`), `anti-patterns` and `ranks`.
 *
 * @example
 * const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
 * await index.build(documents);
 * const { results, warnings } = await index.search('convert this PDF to text', { k: 5 });
 */
import type { Embedder } from './embedders/embedder.ts';
import { createBoundedMemo } from './retrieval-index/bounded-memo.ts';
import { createDocumentStore } from './retrieval-index/document-store.ts';
import { analyseQuery, type QueryAnalysis } from './retrieval-index/query-analysis.ts';
import { search } from './retrieval-index/search.ts';
import { resolveSettings, type RetrievalOptions } from './retrieval-index/settings.ts';
import { buildSnapshot, type Snapshot } from './retrieval-index/snapshot.ts';
import type { RetrievalIndex } from './retrieval-index/types.ts';

export { queryTerms } from './retrieval-index/query-analysis.ts';
export type { RetrievalOptions } from './retrieval-index/settings.ts';
export type { BuildOptions, RetrievalIndex, RetrievalResult, RetrievalSearchResult, SearchOptions } from './retrieval-index/types.ts';
export type { LearnedExampleField, LearnedToolText } from './retrieval-index/learned-field.ts';

/** How many analysed queries (and query vectors) each index remembers; repeated requests skip the work. */
const queryCacheSize = 512;

/** Creates an empty retrieval index. Without an embedder it ranks lexically. */
export function createRetrievalIndex(config: { embedder?: Embedder; options?: RetrievalOptions } = {}): RetrievalIndex {
  const embedder = config.embedder;
  const settings = resolveSettings(config.options ?? {}, embedder);
  const store = createDocumentStore(embedder, settings.textShare);
  const analyses = createBoundedMemo<QueryAnalysis>(queryCacheSize);
  const queryVectors = createBoundedMemo<Float32Array[]>(queryCacheSize);
  let snapshot: Snapshot | undefined;

  const current = (): Snapshot => {
    if (snapshot) return snapshot;
    analyses.clear(); // concept expansion depends on the catalog's document frequencies
    const rows = store.vectorRows();
    snapshot = buildSnapshot(store.list(), rows, settings);
    if (rows !== undefined && snapshot.matrix !== undefined) store.shareRows(snapshot.documents, snapshot.matrix, snapshot.hasVector, rows.dimensions);
    return snapshot;
  };
  const analyse = (query: string): QueryAnalysis =>
    analyses.get(query) ?? analyses.set(query, analyseQuery(query, settings, () => current().lexical));
  const context = {
    settings, embedder, analyse, queryVectors, snapshot: current,
    hasVectors: () => store.hasVectors,
    buildWarnings: () => store.warnings,
  };

  return {
    get size() {
      return store.size;
    },
    get hasVectors() {
      return store.hasVectors;
    },
    get warnings() {
      return store.warnings;
    },
    async build(list, options = {}) {
      await store.replace(list, options);
      snapshot = undefined;
    },
    async upsert(list, options = {}) {
      await store.upsert(list, options);
      snapshot = undefined;
    },
    remove(ids) {
      if (store.remove(ids)) snapshot = undefined;
    },
    vectorOf: (id) => store.vectorOf(id),
    search: (query, options) => search(context, query, options),
  };
}
