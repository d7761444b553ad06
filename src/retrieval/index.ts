/**
 * @module retrieval
 * Public surface of retrieval: the hybrid index, the Embedder spec and its three
 * implementations, Tool2Vec, persistence of vectors, and the evaluation behind `quiver eval`.
 */
export { createRetrievalIndex, queryTerms } from './retrieval-index.ts';
export type { RetrievalIndex, RetrievalOptions, RetrievalResult, RetrievalSearchResult, SearchOptions, BuildOptions } from './retrieval-index.ts';
export { documentFields, documentText, describeParameters, fieldNames } from './document.ts';
export type { RetrievalDocument, FieldName } from './document.ts';
export type { Embedder } from './embedders/embedder.ts';
export { dot, meanVector, normalizeInPlace } from './embedders/embedder.ts';
export { createOfflineEmbedder } from './embedders/offline.ts';
export type { OfflineEmbedderOptions } from './embedders/offline.ts';
export { createOpenAICompatibleEmbedder } from './embedders/openai-compatible.ts';
export type { OpenAICompatibleEmbedderSettings } from './embedders/openai-compatible.ts';
export { createTransformersEmbedder, checkModelFolder } from './embedders/transformers.ts';
export type { TransformersEmbedderSettings } from './embedders/transformers.ts';
export { embedDocuments, defaultTextShare } from './tool2vec.ts';
export { recomputeStale, loadVectors, embeddingDrift, toolToDocument } from './embedding-sync.ts';
export type { RecomputeResult } from './embedding-sync.ts';
export { splitClauses } from './multi-intent.ts';
export { tokenize, terms, splitWords, stem } from './tokenizer.ts';
export { runEvaluation, reportJson, reportTable } from './eval/run.ts';
export { loadEvalData } from './eval/load.ts';
export { runEval, executeEval } from './eval/cli.ts';
