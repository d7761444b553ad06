/**
 * @module api/routes/plugins/rollouts
 * Blue-green upgrades over HTTP (issue #11, docs/rollouts.md): start an upgrade into the idle
 * slot, read a plugin's slots, step health and history, and promote, roll back, pause or resume
 * its rollout. Admin-scoped: a rollout changes what every tenant is served. The monitor that
 * takes the steps runs in the server (`quiver serve`).
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { RolloutService } from '../../../rollouts/index.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';

const upgradeSchema = z
  .object({
    ref: z.string().min(1).max(200).optional(),
    version: z.string().min(1).max(200).optional(),
  })
  .strict()
  .refine((body) => body.ref === undefined || body.version === undefined, 'give ref or version, not both');

const rollbackSchema = z.object({ reason: z.string().min(1).max(500).optional() }).strict();

/** `POST /api/v1/plugins/:id/upgrade`, `GET /api/v1/rollouts`, `GET|POST /api/v1/plugins/:id/rollout[/promote|rollback|pause|resume]`. */
export function rolloutRoutes(rollouts: RolloutService): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/rollouts', async (c) => {
        principalWith(c, 'admin');
        return c.json({ rollouts: await rollouts.list() });
      });
      app.post('/api/v1/plugins/:id/upgrade', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, upgradeSchema, 'upgrade');
        const started = await rollouts.upgrade(c.req.param('id'), body);
        return c.json({ ...started.view, warnings: started.warnings }, 202);
      });
      app.get('/api/v1/plugins/:id/rollout', async (c) => {
        principalWith(c, 'admin');
        return c.json(await rollouts.status(c.req.param('id')));
      });
      app.post('/api/v1/plugins/:id/rollout/rollback', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, rollbackSchema, 'rollback');
        return c.json(await rollouts.rollback(c.req.param('id'), body.reason));
      });
      for (const verb of ['promote', 'pause', 'resume'] as const) {
        app.post(`/api/v1/plugins/:id/rollout/${verb}`, async (c) => {
          principalWith(c, 'admin');
          return c.json(await rollouts[verb](c.req.param('id')));
        });
      }
    },
    openapi: {
      '/api/v1/rollouts': { get: { summary: 'Every plugin with blue-green slots: slots, open or latest rollout, step health, history (admin)', tags: ['plugins', 'rollouts'] } },
      '/api/v1/plugins/:id/upgrade': { post: { summary: 'Stage a new version ({ref} or {version}) into the idle slot and start its rollout (admin); 202', tags: ['plugins', 'rollouts'] } },
      '/api/v1/plugins/:id/rollout': { get: { summary: "A plugin's slots, rollout, current step health and history (admin)", tags: ['plugins', 'rollouts'] } },
      '/api/v1/plugins/:id/rollout/promote': { post: { summary: 'Promote the canary now (admin)', tags: ['plugins', 'rollouts'] } },
      '/api/v1/plugins/:id/rollout/rollback': { post: { summary: 'Roll the open rollout back now, optional {reason} (admin)', tags: ['plugins', 'rollouts'] } },
      '/api/v1/plugins/:id/rollout/pause': { post: { summary: 'Hold the rollout at its traffic share (admin)', tags: ['plugins', 'rollouts'] } },
      '/api/v1/plugins/:id/rollout/resume': { post: { summary: 'Resume a paused rollout (admin)', tags: ['plugins', 'rollouts'] } },
    },
  };
}
