/**
 * @module selection/persistent-retrieval
 * The production retrieval for the pipeline: the retrieval service's hybrid index (fielded
 * BM25 + vectors + multi-intent), seeded with the vectors stored in pgvector so a build only
 * embeds what is missing (DESIGN §3.3: the hot path holds the index in memory, the database
 * stays the truth). A failing vector load degrades to embedding in memory, with a warning.
 */
import type { Database } from '../store/database.ts';
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';
import { createRetrievalIndex, type RetrievalIndex } from '../retrieval/retrieval-index.ts';
import { embedsInline, type Embedder } from '../retrieval/embedders/embedder.ts';
import { loadVectors } from '../retrieval/embedding-sync.ts';
import type { RetrievalDocument } from '../retrieval/document.ts';
import { adaptRetrievalIndex, type SelectionRetrieval } from './retrieval.ts';

/** Options of `createPersistentRetrieval`. */
export interface PersistentRetrievalOptions {
  db: Database;
  embedder?: Embedder | undefined;
  logger?: Logger;
  /**
   * Whether a build embeds the tools that have no stored vector yet (default: only with an
   * embedder cheap enough for the request path, `embedsInline`). With a model, those tools rank lexically until the background
   * worker has embedded them: searches never wait for catalog embedding (issue #25).
   */
  embedMissing?: () => boolean;
}

/** A SelectionRetrieval over the hybrid index, reusing stored vectors. */
export function createPersistentRetrieval(options: PersistentRetrievalOptions): SelectionRetrieval {
  const logger = options.logger ?? silentLogger;
  const index: RetrievalIndex = createRetrievalIndex(options.embedder ? { embedder: options.embedder } : {});

  async function storedVectors(ids: readonly string[]): Promise<Map<string, Float32Array> | undefined> {
    if (!options.embedder || ids.length === 0) return undefined;
    try {
      return await loadVectors(options.db, options.embedder, ids);
    } catch (error) {
      logger.warn({ err: error }, 'retrieval: could not load stored vectors; embedding in memory');
      return undefined;
    }
  }

  return adaptRetrievalIndex(index, {
    method: options.embedder ? `hybrid:${options.embedder.modelId}` : 'lexical',
    async build(documents: readonly RetrievalDocument[]) {
      const vectors = await storedVectors(documents.map((d) => d.id));
      const embedMissing = options.embedMissing?.() ?? embedsInline(options.embedder);
      await index.build(documents, { ...(vectors ? { vectors } : {}), embedMissing });
    },
  });
}
