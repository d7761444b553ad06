/**
 * @module api/routes/catalog/tools
 * Tools of the registry (seed 001 §8.1): list (filters, paging), detail, register, update (a new
 * version), soft delete, version history and rollback. Each change is attributed to the calling
 * key's name in the version history. A tenant key reads only the tools it may see.
 */
import type { Context, Hono } from 'hono';
import { createToolInputSchema, rollbackInputSchema, toolListQuerySchema, toolPatchSchema } from '../../../catalog/schemas.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../../http.ts';
import { assertVisible } from '../../tenancy.ts';
import type { ApiRouteModule } from '../../app.ts';
import { BASE, type CatalogRouteParts } from './parts.ts';

const rollbackBodySchema = rollbackInputSchema.omit({ changedBy: true });

/** The calling key's name, recorded as the author of a change. */
function author(c: Context<ApiEnv>): string {
  return `key:${principalWith(c, 'admin').name}`;
}

/** Routes under /internal/tool-registry/tools. */
export function toolRoutes({ catalog, tenancy }: CatalogRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get(`${BASE}/tools`, async (c) => {
        const visible = await tenancy.visibleToolIds(principalWith(c, 'read'));
        const { items, ...page } = await catalog.listTools(readQuery(c, toolListQuerySchema), visible ? { onlyIds: visible } : {});
        return c.json({ tools: items, ...page });
      });
      app.get(`${BASE}/tools/:id`, async (c) => {
        assertVisible(await tenancy.visibleToolIds(principalWith(c, 'read')), c.req.param('id'), 'tool');
        return c.json({ tool: await catalog.getTool(c.req.param('id')) });
      });
      app.post(`${BASE}/tools`, async (c) => {
        const changedBy = author(c);
        const input = await readJson(c, createToolInputSchema, 'tool');
        return c.json({ tool: await catalog.createTool({ ...input, changedBy }) }, 201);
      });
      app.put(`${BASE}/tools/:id`, async (c) => {
        const changedBy = author(c);
        const patch = await readJson(c, toolPatchSchema, 'tool patch');
        return c.json({ tool: await catalog.updateTool(c.req.param('id'), { ...patch, changedBy }) });
      });
      app.delete(`${BASE}/tools/:id`, async (c) => {
        const changedBy = author(c);
        return c.json({ tool: await catalog.deleteTool(c.req.param('id'), { changedBy }) });
      });
      app.get(`${BASE}/tools/:id/versions`, async (c) => {
        assertVisible(await tenancy.visibleToolIds(principalWith(c, 'read')), c.req.param('id'), 'tool');
        return c.json({ versions: await catalog.listToolVersions(c.req.param('id')) });
      });
      app.post(`${BASE}/tools/:id/rollback`, async (c) => {
        const changedBy = author(c);
        const input = await readJson(c, rollbackBodySchema, 'rollback');
        return c.json({ tool: await catalog.rollbackTool(c.req.param('id'), { ...input, changedBy }) });
      });
    },
    openapi: {
      [`${BASE}/tools`]: {
        get: { summary: 'List tools (filters: pluginId, pluginName, categoryId, category, status, embeddingStatus, orgId, search, includeDeleted; paging: limit ≤ 500, offset)', tags: ['catalog'] },
        post: { summary: 'Register a tool (version 1)', tags: ['catalog'], requestBody: createToolInputSchema, responses: { '201': 'Created', '404': 'Unknown plugin or category', '409': 'Already exists' } },
      },
      [`${BASE}/tools/:id`]: {
        get: { summary: 'Tool detail with full metadata', tags: ['catalog'], responses: { '200': 'OK', '404': 'Unknown tool' } },
        put: { summary: 'Update a tool (writes a version snapshot)', tags: ['catalog'], requestBody: toolPatchSchema },
        delete: { summary: 'Soft-delete a tool', tags: ['catalog'] },
      },
      [`${BASE}/tools/:id/versions`]: { get: { summary: 'Version history with changed fields', tags: ['catalog'] } },
      [`${BASE}/tools/:id/rollback`]: {
        post: { summary: 'Roll back to a version (as a new version)', tags: ['catalog'], requestBody: rollbackBodySchema },
      },
    },
  };
}
