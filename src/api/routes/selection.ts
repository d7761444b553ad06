/**
 * @module api/routes/selection
 * The selection API (DESIGN §1 "platform engineer", seed 001 §8.4–8.5):
 * - `POST /v1/select` (scope `select`): the pipeline, with the request's context constrained
 *   by the API key's bindings: a key bound to an organisation cannot select for another one
 *   (403); a bound user, roles or tier replace the request's; a bound workspace / project is
 *   the default and cannot be left (403).
 * - `POST /v1/outcomes` (scope `select`): what the LLM called; a bound key only reaches its
 *   own organisation's and workspace's events (others read as 404).
 * - `POST /internal/tool-registry/test-selection` (admin): the pipeline without logging.
 * - `GET /internal/tool-registry/analytics/{metrics,heatmap,accuracy,drift}` (read or admin):
 *   admins see every organisation (or `?orgId=`), other keys only their own.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { hasScope, type Principal } from '../../access/api-keys.ts';
import { selectToolsInputSchema, type SelectionEngine, type SelectToolsInput } from '../../selection/engine.ts';
import { analyticsQuerySchema, type AnalyticsQuery, type OrgScope } from '../../selection/analytics.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

/** Body of `POST /v1/select` and of the admin test selection. */
export const selectRequestSchema = selectToolsInputSchema.omit({ log: true });

/** Body of `POST /v1/outcomes`. */
export const outcomeRequestSchema = z.strictObject({
  eventId: z.string().uuid(),
  /** Tools the LLM called: qualified names, provider names or tool ids. */
  toolsCalled: z.array(z.string().min(1).max(300)).max(100),
  success: z.boolean(),
});

const analyticsRequestSchema = analyticsQuerySchema.extend({ orgId: z.string().min(1).max(200).optional() });

function forbidden(message: string): QuiverError {
  return new QuiverError(ErrorCodes.forbidden, message);
}

/** The request's context with the key's bindings applied (see the module comment). */
export function constrainToPrincipal(principal: Principal, input: z.output<typeof selectRequestSchema>): SelectToolsInput {
  const context = input.context;
  if (principal.orgId !== null && context.orgId && context.orgId !== principal.orgId) {
    throw forbidden('this API key is bound to another organisation');
  }
  return {
    ...input,
    context: {
      ...context,
      orgId: principal.orgId ?? context.orgId,
      userId: principal.userId ?? context.userId,
      roles: principal.roles.length > 0 ? principal.roles : context.roles,
      tier: principal.tier ?? context.tier,
      workspace: context.workspace ?? principal.workspaceId,
      project: context.project ?? principal.projectId,
    },
  };
}

function binding(principal: Principal) {
  return { binding: { workspaceId: principal.workspaceId, projectId: principal.projectId } };
}

function analyticsScope(c: Context<ApiEnv>): { query: AnalyticsQuery; orgScope: OrgScope } {
  const principal = c.get('principal');
  if (!hasScope(principal, 'read')) throw forbidden("analytics need the 'read' or 'admin' scope");
  const { orgId, ...query } = readQuery(c, analyticsRequestSchema);
  if (principal.scopes.includes('admin')) return { query, orgScope: orgId };
  if (orgId !== undefined && orgId !== principal.orgId) throw forbidden('this API key can only read its own organisation');
  // A non-admin key without an organisation sees only data that belongs to none.
  return { query, orgScope: principal.orgId };
}

/** Routes of the selection API. */
export function selectionRoutes(services: { selection: SelectionEngine }): ApiRouteModule {
  const { selection } = services;
  return {
    register(app: Hono<ApiEnv>) {
      app.post('/v1/select', async (c) => {
        const principal = principalWith(c, 'select');
        const input = await readJson(c, selectRequestSchema, 'selection request');
        return c.json(await selection.selectTools({ ...constrainToPrincipal(principal, input), log: true }, binding(principal)));
      });
      app.post('/v1/outcomes', async (c) => {
        const principal = principalWith(c, 'select');
        const input = await readJson(c, outcomeRequestSchema, 'outcome');
        const result = await selection.recordOutcome(
          input.eventId,
          { toolsCalled: input.toolsCalled, success: input.success },
          { orgId: principal.orgId, workspaceId: principal.workspaceId },
        );
        return c.json(result);
      });
      app.post('/internal/tool-registry/test-selection', async (c) => {
        const principal = principalWith(c, 'admin');
        const input = await readJson(c, selectRequestSchema, 'test selection');
        return c.json(await selection.selectTools({ ...constrainToPrincipal(principal, input), log: false }, binding(principal)));
      });
      app.get('/internal/tool-registry/analytics/metrics', async (c) => {
        const { query, orgScope } = analyticsScope(c);
        return c.json(await selection.analytics.metrics(query, orgScope));
      });
      app.get('/internal/tool-registry/analytics/heatmap', async (c) => {
        const { query, orgScope } = analyticsScope(c);
        return c.json(await selection.analytics.heatmap(query, orgScope));
      });
      app.get('/internal/tool-registry/analytics/accuracy', async (c) => {
        const { query, orgScope } = analyticsScope(c);
        return c.json(await selection.analytics.accuracy(query, orgScope));
      });
      app.get('/internal/tool-registry/analytics/drift', async (c) => {
        const { query, orgScope } = analyticsScope(c);
        return c.json(await selection.analytics.drift(query, orgScope));
      });
    },
    openapi: {
      '/v1/select': {
        post: {
          summary: 'Select the tools an LLM should see for a query (policy → candidates → page → retrieval → bandit → pins)',
          tags: ['selection'],
          requestBody: selectRequestSchema,
          responses: { '200': 'Selected tools, provider-ready schemas and metadata', '403': 'Context outside the key bindings', '404': 'Unknown workspace or project', '503': 'A security stage could not be read (fail closed)' },
        },
      },
      '/v1/outcomes': {
        post: {
          summary: 'Report which tools the LLM called and whether the calls succeeded (updates the bandit)',
          tags: ['selection'],
          requestBody: outcomeRequestSchema,
          responses: { '200': 'Recorded', '404': 'Unknown event (or another organisation’s)', '409': 'Outcome already recorded' },
        },
      },
      '/internal/tool-registry/test-selection': {
        post: { summary: 'Run a selection without logging an event (admin)', tags: ['selection'], requestBody: selectRequestSchema },
      },
      ...Object.fromEntries(
        (
          [
            ['metrics', 'Selection metrics: totals, latency p50/p95, method and outcome breakdowns, average tokens saved'],
            ['heatmap', 'Tool × page × count of offered and called tools'],
            ['accuracy', 'Daily hit rate: a called tool was among the offered ones'],
            ['drift', 'Tools whose embedding is missing, stale or older than maxAgeDays'],
          ] as const
        ).map(([name, summary]) => [
          `/internal/tool-registry/analytics/${name}`,
          {
            get: {
              summary,
              tags: ['analytics'],
              parameters: [
                { name: 'days', in: 'query' as const, description: 'Window in days (default 7)' },
                { name: 'limit', in: 'query' as const, description: 'Most rows (heatmap, drift)' },
                { name: 'maxAgeDays', in: 'query' as const, description: 'Drift threshold (default 7)' },
                { name: 'orgId', in: 'query' as const, description: 'Admins: one organisation only' },
              ],
            },
          },
        ]),
      ),
    },
  };
}
