/**
 * @module api/routes/catalog/plugin-sync
 * Plugin self-registration (seed 001 §8.5, §9): a plugin declares its tools, categories and
 * mappings in one payload, applied as a differential sync. The seed's `X-Service-Key` is an API
 * key with the `admin` scope here.
 */
import type { Hono } from 'hono';
import { syncPayloadSchema } from '../../../catalog/sync-schema.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import { BASE, type CatalogRouteParts } from './parts.ts';

/** `POST /internal/tool-registry/plugins/sync`. */
export function pluginSyncRoutes({ catalog }: CatalogRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.post(`${BASE}/plugins/sync`, async (c) => {
        principalWith(c, 'admin');
        return c.json({ report: await catalog.syncPlugin(await readJson(c, syncPayloadSchema, 'plugin sync payload')) });
      });
    },
    // A whole plugin's catalog (thousands of tools with schemas) exceeds the default 1 MiB.
    bodyLimits: { [`${BASE}/plugins/sync`]: 32 * 1024 * 1024 },
    openapi: {
      [`${BASE}/plugins/sync`]: {
        post: { summary: 'Plugin self-registration: differential sync of tools, categories and mappings', tags: ['catalog'], requestBody: syncPayloadSchema },
      },
    },
  };
}
