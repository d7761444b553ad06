/**
 * @module api/routes/plugins/approvals
 * Tool pinning over HTTP (issue #10): the quarantined tools of every plugin or of one, each
 * with the readable diff of its approved and served definitions, and the approval that lifts a
 * quarantine (admin scope, recorded with the key's name). A tenant key reads only plugins it
 * may see; approving is the operator's.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { PinningService } from '../../../trust/pinning/index.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

/** Body of `POST /api/v1/plugins/:id/approvals`: the tools to approve (none: every quarantined tool). */
export const approveBodySchema = z.strictObject({
  tools: z.array(z.string().min(1).max(200)).max(500).optional(),
});

/** `GET /api/v1/plugins/quarantine`, `GET /api/v1/plugins/:id/approvals`, `POST /api/v1/plugins/:id/approvals`. */
export function approvalRoutes({ visibility }: Pick<PluginRouteParts, 'visibility'>, pinning: Pick<PinningService, 'quarantined' | 'approve'>): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/plugins/quarantine', async (c) => {
        const visible = await visibility.pluginNames(c);
        const tools = await pinning.quarantined();
        return c.json({ tools: visible === undefined ? tools : tools.filter((tool) => visible.has(tool.plugin)) });
      });
      app.get('/api/v1/plugins/:id/approvals', async (c) => c.json({ tools: await pinning.quarantined(await visibility.plugin(c)) }));
      app.post('/api/v1/plugins/:id/approvals', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await readJson(c, approveBodySchema, 'approval');
        const result = await pinning.approve(await visibility.plugin(c), body.tools ?? [], `key:${principal.name}`);
        return c.json(result);
      });
    },
    openapi: {
      '/api/v1/plugins/quarantine': {
        get: { summary: 'Quarantined tools of every plugin: reason, approved and served definitions and their diff (tool pinning, issue #10)', tags: ['plugins'] },
      },
      '/api/v1/plugins/:id/approvals': {
        get: { summary: "A plugin's quarantined tools pending approval, with diffs", tags: ['plugins'] },
        post: { summary: 'Approve the served definitions of quarantined tools ({tools?: [...]}; none named: all); admin scope, recorded with the key', tags: ['plugins'] },
      },
    },
  };
}
