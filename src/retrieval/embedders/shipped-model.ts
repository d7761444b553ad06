/**
 * @module retrieval/embedders/shipped-model
 * `QUIVER_EMBEDDER=model` (the default, issue #25): the sentence-embedding model that ships with
 * the install (USE-Lite, `use-lite.ts`), falling back to the hashed offline embedder, with a
 * warning, when the model cannot load.
 */
import type { Logger } from '../../core/logger.ts';
import { withFallback, type EmbedderStatus, type ReportingEmbedder } from './fallback.ts';
import { createOfflineEmbedder } from './offline.ts';
import { createUseLiteEmbedder, installedUseLiteDir, missingUseLiteFiles } from './use-lite.ts';

/** Options of `createShippedModelEmbedder`. */
export interface ShippedModelOptions {
  /** Model folder (default: the installed package's). */
  modelDir?: string | undefined;
  logger?: Logger;
  onFallback?: (status: EmbedderStatus) => void;
}

/** The shipped model with the offline embedder as its fallback. */
export function createShippedModelEmbedder(options: ShippedModelOptions = {}): ReportingEmbedder {
  const modelDir = options.modelDir ?? installedUseLiteDir();
  const problem = missingUseLiteFiles(modelDir);
  return withFallback(createUseLiteEmbedder(modelDir !== undefined ? { modelDir } : {}), () => createOfflineEmbedder(), {
    ...(problem !== undefined ? { knownProblem: problem } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onFallback ? { onFallback: options.onFallback } : {}),
  });
}
