/**
 * @module retrieval/embedders/fallback
 * The configured model with the hashed embedder as its fallback (issue #25): when the model
 * cannot load (its files are missing, the runtime fails), Quiver ranks with the offline
 * embedder instead and says so (`status().warning`, shown by /readyz and the UI). The switch
 * is one-way for the life of the process; the model id changes with it, so the background
 * worker re-embeds the catalog under the fallback's id.
 */
import { silentLogger, type Logger } from '../../core/logger.ts';
import type { Embedder } from './embedder.ts';

/** Which embedder ranks, and why not the configured one. */
export interface EmbedderStatus {
  /** The configured embedder's model id. */
  configured: string;
  /** The model id in use. */
  active: string;
  provider: string;
  dimensions: number;
  /** True when the fallback replaced the configured model. */
  fallback: boolean;
  /** Why the fallback is in use. */
  warning?: string;
}

/** An Embedder that reports which model is in use. */
export interface ReportingEmbedder extends Embedder {
  status(): EmbedderStatus;
}

/** Options of `withFallback`. */
export interface FallbackOptions {
  /** Why the model cannot load, known before trying (e.g. missing files): fall back at once. */
  knownProblem?: string;
  logger?: Logger;
  /** Called once when the fallback takes over. */
  onFallback?: (status: EmbedderStatus) => void;
}

/** Wraps `primary` so a load failure switches to `fallback` (built on demand). */
export function withFallback(primary: Embedder, fallback: () => Embedder, options: FallbackOptions = {}): ReportingEmbedder {
  const logger = options.logger ?? silentLogger;
  let active: Embedder = primary;
  let warning: string | undefined;

  const switchOver = (reason: string): void => {
    if (active !== primary) return;
    active = fallback();
    warning = `the embedding model ${primary.modelId} could not load (${reason}); ranking with the fallback ${active.modelId}, which understands far less meaning`;
    logger.warn({ configured: primary.modelId, active: active.modelId, reason }, 'embeddings: model unavailable, using the fallback embedder');
    void primary.close?.().catch(() => {});
    options.onFallback?.(status());
  };
  const status = (): EmbedderStatus => ({
    configured: primary.modelId,
    active: active.modelId,
    provider: active.provider,
    dimensions: active.dimensions,
    fallback: active !== primary,
    ...(warning ? { warning } : {}),
  });
  if (options.knownProblem) switchOver(options.knownProblem);

  return {
    specificationVersion: 'v1',
    get provider() {
      return active.provider;
    },
    get modelId() {
      return active.modelId;
    },
    get dimensions() {
      return active.dimensions;
    },
    get maxBatchSize() {
      return active.maxBatchSize;
    },
    async embed(texts, embedOptions) {
      const used = active;
      try {
        return await used.embed(texts, embedOptions);
      } catch (error) {
        // Only a model that never loaded falls back; a later inference error is the caller's
        // to handle (ranking fails open for that request).
        if (used === primary && (error as { code?: string }).code === 'embedder_unavailable') {
          switchOver((error as Error).message);
          return active.embed(texts, embedOptions);
        }
        throw error;
      }
    },
    status,
    async close() {
      await active.close?.();
      if (active !== primary) await primary.close?.().catch(() => {});
    },
  };
}
