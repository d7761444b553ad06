/**
 * @module api/routes/plugins/enablement
 * Enabling and disabling a plugin in a workspace (all its projects) or in one project (seed 003).
 * Admin only. The body may be left out: then the default workspace is meant.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import { nameSchema, type PluginRouteParts } from './parts.ts';

/** Body of the enable / disable endpoints. */
export const scopeBodySchema = z.strictObject({ workspace: nameSchema.optional(), project: nameSchema.optional() });

/** An optional JSON body (enable/disable may be sent with none: the default workspace). */
async function readOptionalJson<S extends z.ZodType>(c: Context<ApiEnv>, schema: S): Promise<z.output<S>> {
  const length = c.req.header('content-length');
  if ((length === undefined || length === '0') && !c.req.header('content-type')) return schema.parse({});
  return readJson(c, schema, 'scope');
}

/** `POST /api/v1/plugins/:id/enable` and `/disable`, answering with the plugin's enablements. */
export function enablementRoutes({ plugins }: PluginRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.post('/api/v1/plugins/:id/enable', async (c) => {
        principalWith(c, 'admin');
        const scope = await readOptionalJson(c, scopeBodySchema);
        await plugins.enable(c.req.param('id'), scope);
        return c.json({ enablements: (await plugins.show(c.req.param('id'))).enablements });
      });
      app.post('/api/v1/plugins/:id/disable', async (c) => {
        principalWith(c, 'admin');
        const scope = await readOptionalJson(c, scopeBodySchema);
        await plugins.disable(c.req.param('id'), scope);
        return c.json({ enablements: (await plugins.show(c.req.param('id'))).enablements });
      });
    },
    openapi: {
      '/api/v1/plugins/:id/enable': { post: { summary: 'Enable in a workspace (all its projects) or one project', tags: ['plugins'], requestBody: scopeBodySchema } },
      '/api/v1/plugins/:id/disable': { post: { summary: 'Disable in a workspace, or opt one project out', tags: ['plugins'], requestBody: scopeBodySchema } },
    },
  };
}
