/**
 * @module api/routes/plugins/settings
 * What a plugin is launched with, admin only: credentials (write-only, stored encrypted, values
 * never come back) and non-secret settings (plugins/plugin-env.ts, values in plain), each set
 * and removed per key the same way.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { ErrorCodes } from '../../../core/errors.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

/** Body of `PUT /api/v1/plugins/:id/secrets/:key`. */
export const secretBodySchema = z.strictObject({ value: z.string().min(1).max(65_536) });

/** Body of `PUT /api/v1/plugins/:id/env/:key`: a plain, non-secret setting (may be empty). */
export const envBodySchema = z.strictObject({ value: z.string().max(65_536) });

/** One kind of per-key value of a plugin, under `/api/v1/plugins/:id/<segment>/:key`. */
interface KeyedValueKind {
  segment: 'secrets' | 'env';
  /** What one value is called in messages. */
  noun: string;
  schema: z.ZodType<{ value: string }>;
}

/** Where one kind of keyed value is stored. */
interface KeyedValueStore {
  set(plugin: string, key: string, value: string): Promise<unknown>;
  /** False when the key was not set. */
  unset(plugin: string, key: string): Promise<boolean>;
}

/** PUT (set) and DELETE (204, or 404 when the key is not set) of one kind of keyed value. */
function registerKeyedValues(app: Hono<ApiEnv>, kind: KeyedValueKind, store: KeyedValueStore): void {
  const path = `/api/v1/plugins/:id/${kind.segment}/:key`;
  app.put(path, async (c) => {
    principalWith(c, 'admin');
    const body = await readJson(c, kind.schema, kind.noun);
    return c.json(await store.set(c.req.param('id')!, c.req.param('key')!, body.value));
  });
  app.delete(path, async (c) => {
    principalWith(c, 'admin');
    const key = c.req.param('key')!;
    if (await store.unset(c.req.param('id')!, key)) return c.body(null, 204);
    return c.json({ error: { code: ErrorCodes.notFound, message: `${kind.noun} '${key}' is not set` } }, 404);
  });
}

/** Credentials and settings of a plugin. */
export function settingsRoutes({ plugins }: PluginRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      registerKeyedValues(app, { segment: 'secrets', noun: 'secret', schema: secretBodySchema }, {
        set: (plugin, key, value) => plugins.setSecret(plugin, key, value),
        unset: (plugin, key) => plugins.deleteSecret(plugin, key),
      });
      app.get('/api/v1/plugins/:id/env', async (c) => {
        principalWith(c, 'admin');
        return c.json({ env: await plugins.listEnv(c.req.param('id')) });
      });
      registerKeyedValues(app, { segment: 'env', noun: 'setting', schema: envBodySchema }, {
        set: (plugin, key, value) => plugins.setEnv(plugin, key, value),
        unset: (plugin, key) => plugins.unsetEnv(plugin, key),
      });
    },
    openapi: {
      '/api/v1/plugins/:id/secrets/:key': {
        put: { summary: 'Set a credential (stored AES-256-GCM encrypted; never returned)', tags: ['plugins'], requestBody: secretBodySchema },
        delete: { summary: 'Delete a credential', tags: ['plugins'], responses: { '204': 'Deleted' } },
      },
      '/api/v1/plugins/:id/env': { get: { summary: 'Non-secret settings of a plugin, values in plain (admin)', tags: ['plugins'] } },
      '/api/v1/plugins/:id/env/:key': {
        put: {
          summary: 'Set a non-secret setting, passed to the plugin as an environment variable (409 when the key is a secret; 400 for required/header credentials, LD_*, QUIVER_*)',
          tags: ['plugins'],
          requestBody: envBodySchema,
          responses: { '200': 'Stored', '400': 'Not allowed as a setting', '409': 'Stored as a secret' },
        },
        delete: { summary: 'Remove a setting', tags: ['plugins'], responses: { '204': 'Removed', '404': 'Not set' } },
      },
    },
  };
}
