/**
 * @module retrieval/embedders/shipped-model
 * The embedders that ship with the install (issue #25), each falling back to the hashed offline
 * embedder, with a warning, when it cannot load:
 * - `QUIVER_EMBEDDER=table` (the default): the static token table distilled from the shipped
 *   model (`token-table.ts`), cheap enough to embed on the request path;
 * - `QUIVER_EMBEDDER=model`: the model itself, USE-Lite (`use-lite.ts`), in a worker thread.
 */
import { existsSync } from 'node:fs';
import type { Logger } from '../../core/logger.ts';
import { withFallback, type EmbedderStatus, type ReportingEmbedder } from './fallback.ts';
import { createOfflineEmbedder } from './offline.ts';
import { createTokenTableEmbedder, shippedTokenTablePath } from './token-table.ts';
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
  return withFallback(createUseLiteEmbedder(modelDir !== undefined ? { modelDir } : {}), () => createOfflineEmbedder(), fallbackOptions(problem, options));
}

/** Options of `createShippedTableEmbedder`. */
export interface ShippedTableOptions {
  /** Table file (default: the shipped one). */
  tablePath?: string | undefined;
  logger?: Logger;
  onFallback?: (status: EmbedderStatus) => void;
}

/** The distilled token table with the offline embedder as its fallback. */
export function createShippedTableEmbedder(options: ShippedTableOptions = {}): ReportingEmbedder {
  const path = options.tablePath ?? shippedTokenTablePath;
  const problem = existsSync(path) ? undefined : `${path} is missing`;
  return withFallback(createTokenTableEmbedder({ path }), () => createOfflineEmbedder(), fallbackOptions(problem, options));
}

function fallbackOptions(problem: string | undefined, options: { logger?: Logger; onFallback?: (status: EmbedderStatus) => void }) {
  return {
    ...(problem !== undefined ? { knownProblem: problem } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onFallback ? { onFallback: options.onFallback } : {}),
  };
}
