/**
 * @module api/routes/plugins/marketplace
 * The marketplace of installable plugins: import MCP Registry `server.json` entries (admin),
 * list or search them (read).
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { principalWith, readJson, readQuery, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

const marketplaceQuerySchema = z.object({ q: z.string().min(1).max(500).optional(), limit: z.coerce.number().int().min(1).max(100).default(20) });

/** Routes under /api/v1/marketplace. */
export function marketplaceRoutes({ plugins }: PluginRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.post('/api/v1/marketplace/import', async (c) => {
        principalWith(c, 'admin');
        const document = await readJson(c, z.unknown(), 'marketplace catalog');
        return c.json(await plugins.importMarketplace(document, { source: 'api' }));
      });
      app.get('/api/v1/marketplace', async (c) => {
        principalWith(c, 'read');
        const query = readQuery(c, marketplaceQuerySchema);
        if (query.q === undefined) return c.json({ servers: (await plugins.listMarketplace()).slice(0, query.limit) });
        return c.json({ results: await plugins.searchMarketplace(query.q, query.limit) });
      });
    },
    openapi: {
      '/api/v1/marketplace/import': { post: { summary: 'Import MCP Registry server.json entries (one, an array, or {servers})', tags: ['marketplace'] } },
      '/api/v1/marketplace': {
        get: { summary: 'List, or search with ?q=, installable plugins', tags: ['marketplace'], parameters: [{ name: 'q', in: 'query' }, { name: 'limit', in: 'query' }] },
      },
    },
  };
}
