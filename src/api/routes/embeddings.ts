/**
 * @module api/routes/embeddings
 * `POST /internal/tool-registry/embeddings/recompute` (seed 001 §8.5): embeds the tools whose
 * embedding is pending or stale, and only those.
 */
import type { Hono } from 'hono';
import type { Database } from '../../store/database.ts';
import type { Embedder } from '../../retrieval/embedders/embedder.ts';
import { recomputeStale } from '../../retrieval/embedding-sync.ts';
import { principalWith, type ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

/** Routes of the embedding lifecycle. */
export function embeddingRoutes(services: { db: Database; embedder: Embedder; afterRecompute?: () => void }): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.post('/internal/tool-registry/embeddings/recompute', async (c) => {
        principalWith(c, 'admin');
        const started = performance.now();
        const result = await recomputeStale(services.db, services.embedder);
        if (result.embedded.length > 0) services.afterRecompute?.();
        return c.json({
          model: services.embedder.modelId,
          embedded: result.embedded.length,
          changedMeanwhile: result.changedMeanwhile.length,
          warnings: result.warnings,
          durationMs: Math.round(performance.now() - started),
        });
      });
    },
    openapi: {
      '/internal/tool-registry/embeddings/recompute': {
        post: { summary: 'Embed tools whose embedding is pending or stale (only those)', tags: ['retrieval'] },
      },
    },
  };
}
