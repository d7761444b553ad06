/**
 * @module api/routes/learned-examples
 * Learned example queries of a tool (issue #13, DESIGN §3.10), in the tool registry's group:
 * - `GET    /internal/tool-registry/tools/:id/learned-examples` (scope `read`): the examples and
 *   the learning blocks. A tenant key sees only its own organisation's examples (and never who
 *   taught them); an operator or admin key sees every scope, or one with `?org=`.
 * - `DELETE /internal/tool-registry/tools/:id/learned-examples` (scope `admin`): deletes them
 *   (`?org=` one scope, `?id=` one example); the ranking forgets them at once.
 * - `PUT    /internal/tool-registry/tools/:id/learned-examples/enabled` (scope `admin`):
 *   `{enabled, org?}` switches the tool's learning off or on, in one scope or every scope.
 */
import { z } from 'zod';
import type { Hono } from 'hono';
import type { Learning } from '../../selection/learning/index.ts';
import type { LearnedExampleRow } from '../../store/repositories/learned-examples.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../http.ts';
import { assertVisible, isTenantKey, type TenantVisibility } from '../tenancy.ts';
import type { ApiRouteModule } from '../app.ts';

const BASE = '/internal/tool-registry/tools/:id/learned-examples';
const orgField = z.string().min(1).max(200);
const listQuerySchema = z.strictObject({ org: orgField.optional() });
const deleteQuerySchema = z.strictObject({ org: orgField.optional(), id: z.string().uuid().optional() });
/** Body of `PUT …/learned-examples/enabled`. */
export const learningEnabledSchema = z.strictObject({ enabled: z.boolean(), org: orgField.optional() });

/** An example as the API shows it: the organisation (`null`: callers without one), never for tenants who taught it. */
function shown(row: LearnedExampleRow, withContributor: boolean) {
  return {
    id: row.id,
    orgId: row.orgScope === '' ? null : row.orgScope,
    text: row.text,
    source: row.source,
    hits: row.hits,
    createdAt: row.createdAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    ...(withContributor ? { contributor: row.contributor } : {}),
  };
}

/** The learned-example routes. */
export function learnedExampleRoutes({ learning, tenancy }: { learning: Learning; tenancy: TenantVisibility }): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get(BASE, async (c) => {
        const principal = principalWith(c, 'read');
        const toolId = c.req.param('id');
        assertVisible(await tenancy.visibleToolIds(principal), toolId, 'tool');
        const query = readQuery(c, listQuerySchema);
        const tenant = isTenantKey(principal);
        // A tenant's scope is its key's organisation, whatever it asks.
        const orgId = tenant ? principal.orgId : query.org;
        const examples = await learning.list(toolId, orgId);
        const blocks = (await learning.blocks(toolId)).filter((scope) => !tenant || scope === null || scope === (principal.orgId ?? ''));
        return c.json({
          examples: examples.map((row) => shown(row, !tenant)),
          learning: { enabled: learning.settings.enabled, disabledIn: blocks.map((scope) => (scope === null ? '*' : scope === '' ? null : scope)) },
        });
      });
      app.delete(BASE, async (c) => {
        principalWith(c, 'admin');
        const query = readQuery(c, deleteQuerySchema);
        const deleted = await learning.remove(c.req.param('id'), { orgId: query.org, ...(query.id ? { ids: [query.id] } : {}) });
        return c.json({ deleted });
      });
      app.put(`${BASE}/enabled`, async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, learningEnabledSchema, 'learning switch');
        await learning.setEnabled(c.req.param('id'), body.enabled, body.org);
        return c.json({ enabled: body.enabled, org: body.org ?? '*' });
      });
    },
    openapi: {
      [BASE]: {
        get: { summary: 'Learned example queries of a tool (tenant keys: their organisation only; `?org=` for operators)', tags: ['catalog'], responses: { '200': 'OK', '404': 'Unknown tool' } },
        delete: { summary: 'Delete learned example queries of a tool (`?org=` one organisation, `?id=` one example)', tags: ['catalog'], responses: { '200': 'OK', '403': 'Admin only' } },
      },
      [`${BASE}/enabled`]: {
        put: { summary: "Switch a tool's learning off or on (in one organisation with `org`, else everywhere)", tags: ['catalog'], requestBody: learningEnabledSchema, responses: { '200': 'OK', '403': 'Admin only' } },
      },
    },
  };
}
