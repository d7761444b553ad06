/**
 * @module api/routes/plugins/mounts
 * Host folders granted to a plugin over HTTP (issue #26), admin only: list, grant
 * (`{path, mode: 'ro'|'rw', reason?, restart?}`, recorded with the key) and withdraw. The hub's
 * own home, data folder and key file, and any folder holding them, are refused (400). A change
 * applies at the plugin's next start: its next call, or at once with `restart: true`.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { ErrorCodes } from '../../../core/errors.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

/** Body of `POST /api/v1/plugins/:id/mounts`. */
export const mountBodySchema = z.strictObject({
  path: z.string().min(1).max(4_096).refine((path) => path.startsWith('/'), 'an absolute host path'),
  mode: z.enum(['ro', 'rw']).default('ro'),
  reason: z.string().max(1000).optional(),
  restart: z.boolean().optional(),
});

/** Body of `DELETE /api/v1/plugins/:id/mounts`: the path (a body, not a URL segment: it holds slashes). */
export const unmountBodySchema = z.strictObject({ path: z.string().min(1).max(4_096), restart: z.boolean().optional() });

/** `/api/v1/plugins/:id/mounts`. */
export function mountRoutes({ plugins, visibility }: Pick<PluginRouteParts, 'plugins' | 'visibility'>): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/plugins/:id/mounts', async (c) => {
        principalWith(c, 'admin');
        return c.json({ mounts: await plugins.listMounts(await visibility.plugin(c)) });
      });
      app.post('/api/v1/plugins/:id/mounts', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await readJson(c, mountBodySchema, 'host path grant');
        const result = await plugins.grantMount(await visibility.plugin(c), { ...body, actor: `key:${principal.keyId}:${principal.name}` });
        return c.json(result, result.created ? 201 : 200);
      });
      app.delete('/api/v1/plugins/:id/mounts', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, unmountBodySchema, 'host path');
        if (await plugins.revokeMount(await visibility.plugin(c), body.path, { restart: body.restart })) return c.body(null, 204);
        return c.json({ error: { code: ErrorCodes.notFound, message: `${body.path} is not granted to this plugin` } }, 404);
      });
    },
    openapi: {
      '/api/v1/plugins/:id/mounts': {
        get: { summary: 'Host paths granted to a plugin, with who granted them and when (issue #26); admin scope', tags: ['plugins'] },
        post: { summary: "Grant a host path ({path, mode: 'ro'|'rw', reason?, restart?}); the hub's own paths are refused; admin scope", tags: ['plugins'] },
        delete: { summary: 'Withdraw a granted host path ({path, restart?}); admin scope', tags: ['plugins'] },
      },
    },
  };
}
