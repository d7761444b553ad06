/**
 * @module api/routes/selection
 * The selection API (DESIGN §1 "platform engineer", seed 001 §8.4–8.5):
 * - `POST /v1/select` (scope `select`): the pipeline. A tenant key (`isTenantKey`) selects as
 *   itself and nobody else: the context it runs with is the key's (`tenantContext`), and a body
 *   that sets an organisation, user, roles, tier, workspace or project other than the key's is
 *   refused with 403 naming the field (issue #18 finding 1); a page or session only narrows.
 *   Admin keys and unbound operator keys may select for any context (an orchestrator selecting
 *   for its users), within whatever their key does bind.
 * - `POST /v1/outcomes` (scope `select`): what the LLM called; it takes no context, and a
 *   tenant key only reaches its own organisation's and workspace's events (others read as 404;
 *   a key without an organisation only events without one).
 * - `POST /internal/tool-registry/test-selection` (admin): the pipeline without logging, under
 *   the same context rule.
 * - `GET /internal/tool-registry/analytics/{metrics,heatmap,accuracy,drift}` (read or admin):
 *   admins see every organisation (or `?orgId=`), other keys only their own; a tenant key also
 *   only its workspace's events and only rows about tools it may see (finding 5). If that
 *   visibility cannot be decided the request fails (never open).
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { QuiverError, ErrorCodes, notFound } from '../../core/errors.ts';
import { hasScope, type ApiScope, type Principal } from '../../access/api-keys.ts';
import { selectToolsInputSchema, type SelectionEngine, type SelectToolsInput } from '../../selection/engine.ts';
import { analyticsQuerySchema, type AnalyticsQuery, type OrgScope, type TenantScope } from '../../selection/analytics.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../http.ts';
import {
  TENANT_DEFAULT_WORKSPACE, assertBodyWithinKey, isTenantKey, tenantContext, unrestrictedVisibility, type TenantVisibility,
} from '../tenancy.ts';
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

/** The analytics reports, one `GET …/analytics/<report>` each, with their OpenAPI summaries. */
const ANALYTICS_REPORTS = {
  metrics: 'Selection metrics: totals, latency p50/p95, method and outcome breakdowns, average tokens saved',
  heatmap: 'Tool × page × count of offered and called tools',
  accuracy: 'Daily accuracy: hit rate (a called tool was among the offered ones), top-1 rate and MRR of the called tool in the offer',
  drift: 'Tools whose embedding is missing, stale or older than maxAgeDays',
} as const;

function forbidden(message: string): QuiverError {
  return new QuiverError(ErrorCodes.forbidden, message);
}

/**
 * The context a request runs with (see the module comment): for a tenant key, the key's own
 * identity plus the body's page and session, after refusing any body field that would widen
 * it; for other keys, the body's context with whatever the key binds applied over it.
 */
export async function constrainToPrincipal(
  principal: Principal,
  input: z.output<typeof selectRequestSchema>,
  resolve: TenantVisibility['resolveScope'],
): Promise<SelectToolsInput> {
  const context = input.context;
  if (isTenantKey(principal)) {
    await assertBodyWithinKey(principal, context, resolve);
    return {
      ...input,
      context: {
        ...tenantContext(principal),
        ...(context.page ? { page: context.page } : {}),
        ...(context.sessionId ? { sessionId: context.sessionId } : {}),
      },
    };
  }
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

/** Routes of the selection API; `tenancy` decides what tenant keys see (default: nothing resolves). */
export function selectionRoutes(services: { selection: SelectionEngine; tenancy?: TenantVisibility }): ApiRouteModule {
  const { selection } = services;
  const tenancy = services.tenancy ?? unrestrictedVisibility;

  /** The workspace id a tenant key works in: its binding, else the default workspace. */
  async function tenantWorkspaceId(principal: Principal): Promise<string> {
    if (principal.workspaceId !== null) return principal.workspaceId;
    const scope = await tenancy.resolveScope(TENANT_DEFAULT_WORKSPACE);
    // No default workspace to compare with: refuse rather than read every workspace.
    if (scope === undefined) throw notFound('workspace', TENANT_DEFAULT_WORKSPACE);
    return scope.workspaceId;
  }

  async function analyticsScope(c: Context<ApiEnv>): Promise<{ query: AnalyticsQuery; orgScope: OrgScope; tenant?: TenantScope }> {
    const principal = c.get('principal');
    if (!hasScope(principal, 'read')) throw forbidden("analytics need the 'read' or 'admin' scope");
    const { orgId, ...query } = readQuery(c, analyticsRequestSchema);
    if (principal.scopes.includes('admin')) return { query, orgScope: orgId };
    if (orgId !== undefined && orgId !== principal.orgId) throw forbidden('this API key can only read its own organisation');
    // A non-admin key without an organisation sees only data that belongs to none.
    if (!isTenantKey(principal)) return { query, orgScope: principal.orgId };
    const toolIds = await tenancy.visibleToolIds(principal);
    // A tenant key whose visibility is not decided gets nothing rather than everything.
    if (toolIds === undefined) throw new QuiverError(ErrorCodes.unavailable, 'tenant visibility is not wired into this API');
    return { query, orgScope: principal.orgId, tenant: { workspaceId: await tenantWorkspaceId(principal), toolIds } };
  }

  /**
   * The pipeline for the caller: the body constrained to its key (a tenant key may only narrow),
   * run with the key's binding; `log` records a real selection, not a test one.
   */
  const selecting = (scope: ApiScope, what: string, log: boolean) => async (c: Context<ApiEnv>) => {
    const principal = principalWith(c, scope);
    const input = await readJson(c, selectRequestSchema, what);
    const constrained = await constrainToPrincipal(principal, input, tenancy.resolveScope);
    return c.json(await selection.selectTools({ ...constrained, log }, binding(principal)));
  };

  return {
    register(app: Hono<ApiEnv>) {
      app.post('/v1/select', selecting('select', 'selection request', true));
      app.post('/v1/outcomes', async (c) => {
        const principal = principalWith(c, 'select');
        const input = await readJson(c, outcomeRequestSchema, 'outcome');
        // A tenant key owns the events of its organisation (none when it has none) in its workspace
        // (the default one without a binding); admins and unbound keys select for any context, so
        // their reports are unchecked.
        const ownership = isTenantKey(principal) ? { orgId: principal.orgId, workspaceId: await tenantWorkspaceId(principal) } : {};
        const result = await selection.recordOutcome(input.eventId, { toolsCalled: input.toolsCalled, success: input.success }, ownership);
        return c.json(result);
      });
      app.post('/internal/tool-registry/test-selection', selecting('admin', 'test selection', false));
      for (const report of Object.keys(ANALYTICS_REPORTS) as Array<keyof typeof ANALYTICS_REPORTS>) {
        app.get(`/internal/tool-registry/analytics/${report}`, async (c) => {
          const { query, orgScope, tenant } = await analyticsScope(c);
          return c.json(await selection.analytics[report](query, orgScope, tenant));
        });
      }
    },
    openapi: {
      '/v1/select': {
        post: {
          summary: 'Select the tools an LLM should see for a query (policy → candidates → page → retrieval → bandit → pins)',
          tags: ['selection'],
          requestBody: selectRequestSchema,
          responses: { '200': 'Selected tools, provider-ready schemas and metadata', '403': 'A context field that would widen a tenant key (details.field names it)', '404': 'Unknown workspace or project', '503': 'A security stage could not be read (fail closed)' },
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
        Object.entries(ANALYTICS_REPORTS).map(([name, summary]) => [
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
