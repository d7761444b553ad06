/**
 * @module api/routes/embeddings
 * The embedding lifecycle (seed 001 §8.5; issue #15):
 * - `GET /internal/tool-registry/embeddings/status` (read): the embedder, live tools by
 *   embedding status, whether a background run is running or queued, and the last run;
 * - `POST /internal/tool-registry/embeddings/recompute` (admin): embeds the tools whose
 *   embedding is pending or stale, and only those; `?all=true` re-embeds every tool.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { booleanFlag } from '../../catalog/schemas.ts';
import type { EmbeddingWorker } from '../../retrieval/embedding-worker.ts';
import { principalWith, readQuery, type ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

const recomputeQuerySchema = z.strictObject({ all: booleanFlag.default(false) });

/** Routes of the embedding lifecycle. */
export function embeddingRoutes(services: { embeddings: EmbeddingWorker }): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/internal/tool-registry/embeddings/status', async (c) => {
        principalWith(c, 'read');
        return c.json(await services.embeddings.status());
      });
      app.post('/internal/tool-registry/embeddings/recompute', async (c) => {
        principalWith(c, 'admin');
        const { all } = readQuery(c, recomputeQuerySchema);
        const report = await services.embeddings.runNow({ all });
        const { model } = await services.embeddings.status();
        return c.json({ model, ...report });
      });
    },
    openapi: {
      '/internal/tool-registry/embeddings/status': {
        get: { summary: 'Embedder, live tools by embedding status, background run state and the last run', tags: ['retrieval'] },
      },
      '/internal/tool-registry/embeddings/recompute': {
        post: {
          summary: 'Embed tools whose embedding is pending or stale (only those); ?all=true re-embeds every tool',
          tags: ['retrieval'],
          parameters: [{ name: 'all', in: 'query' as const, description: 'Re-embed every live tool (e.g. after switching embedders)' }],
        },
      },
    },
  };
}
