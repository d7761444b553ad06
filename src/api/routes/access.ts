/**
 * @module api/routes/access
 * API-key management (admin only): list, create (the key is returned once), revoke.
 */
import type { Hono } from 'hono';
import { newKeySchema, type ApiKeyService } from '../../access/api-keys.ts';
import { principalWith, readJson, type ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

/** Routes under /api/v1/keys. */
export function accessRoutes(services: { apiKeys: ApiKeyService }): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/keys', async (c) => {
        principalWith(c, 'admin');
        return c.json({ keys: await services.apiKeys.list() });
      });
      app.post('/api/v1/keys', async (c) => {
        principalWith(c, 'admin');
        const input = await readJson(c, newKeySchema, 'API key');
        const { key, record } = await services.apiKeys.create(input);
        return c.json({ key, record }, 201);
      });
      app.delete('/api/v1/keys/:id', async (c) => {
        principalWith(c, 'admin');
        await services.apiKeys.revoke(c.req.param('id'));
        return c.body(null, 204);
      });
      app.get('/api/v1/whoami', (c) => c.json({ principal: c.get('principal') }));
    },
    openapi: {
      '/api/v1/keys': {
        get: { summary: 'List API keys (no secrets)', tags: ['access'] },
        post: { summary: 'Create an API key; the key is shown once', tags: ['access'], requestBody: newKeySchema, responses: { '201': 'Created' } },
      },
      '/api/v1/keys/:id': { delete: { summary: 'Revoke an API key', tags: ['access'], responses: { '204': 'Revoked' } } },
      '/api/v1/whoami': { get: { summary: 'The calling key and its bindings', tags: ['access'] } },
    },
  };
}
