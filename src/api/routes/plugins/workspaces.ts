/**
 * @module api/routes/plugins/workspaces
 * Workspaces and their projects, the scopes plugins are enabled in (seed 003), and the tools in
 * effect for one. A tenant key lists only its own workspace (the default one when its key names
 * none); projects and a workspace's tool list are for operator keys (a tenant lists its visible
 * tools through the tool registry instead).
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { principalWith, readJson, readQuery, type ApiEnv } from '../../http.ts';
import { TENANT_DEFAULT_WORKSPACE, isTenantKey, refuseTenant } from '../../tenancy.ts';
import type { ApiRouteModule } from '../../app.ts';
import { nameSchema, type PluginRouteParts } from './parts.ts';
import { GATEWAY_TOOL_NAMES, nativeNameReport } from '../../../core/native-names.ts';

/** Body of the workspace and project create endpoints. */
export const scopeCreateBodySchema = z.strictObject({ name: nameSchema, displayName: z.string().min(1).max(200).optional() });

const toolsQuerySchema = z.object({ project: nameSchema.optional() });

/** Body of the native-names switch (issue #12). */
export const nativeNamesBodySchema = z.strictObject({ nativeNames: z.boolean() });

/** Routes under /api/v1/workspaces. */
export function workspaceRoutes({ plugins }: PluginRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/workspaces', async (c) => {
        const principal = principalWith(c, 'read');
        const workspaces = await plugins.listWorkspaces();
        // A tenant sees only its own workspace (the default one when its key names none).
        return c.json({
          workspaces: isTenantKey(principal)
            ? workspaces.filter((w) => (principal.workspaceId ? w.id === principal.workspaceId : w.name === TENANT_DEFAULT_WORKSPACE))
            : workspaces,
        });
      });
      app.post('/api/v1/workspaces', async (c) => {
        principalWith(c, 'admin');
        return c.json(await plugins.createWorkspace(await readJson(c, scopeCreateBodySchema, 'workspace')), 201);
      });
      app.get('/api/v1/workspaces/:workspace/projects', async (c) => {
        refuseTenant(principalWith(c, 'read'), 'projects of a workspace');
        return c.json({ projects: await plugins.listProjects(c.req.param('workspace')) });
      });
      app.post('/api/v1/workspaces/:workspace/projects', async (c) => {
        principalWith(c, 'admin');
        return c.json(await plugins.createProject(c.req.param('workspace'), await readJson(c, scopeCreateBodySchema, 'project')), 201);
      });
      app.get('/api/v1/workspaces/:workspace/tools', async (c) => {
        // A tenant lists its visible tools through the tool registry instead.
        refuseTenant(principalWith(c, 'read'), 'workspace tool lists');
        const query = readQuery(c, toolsQuerySchema);
        return c.json({ tools: await plugins.effectiveTools({ workspace: c.req.param('workspace'), project: query.project }) });
      });
      // Issue #12: which tool names the workspace's MCP sessions see natively, which keep the prefix and why.
      const namesReport = async (workspace: string) => {
        const [on, tools] = await Promise.all([plugins.workspaceNativeNames(), plugins.effectiveTools({ workspace })]);
        return nativeNameReport(workspace, on.has(workspace), tools, GATEWAY_TOOL_NAMES);
      };
      app.get('/api/v1/workspaces/:workspace/names', async (c) => {
        refuseTenant(principalWith(c, 'read'), 'workspace name reports');
        return c.json(await namesReport(c.req.param('workspace')));
      });
      app.put('/api/v1/workspaces/:workspace/native-names', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, nativeNamesBodySchema, 'native names');
        await plugins.setWorkspaceNativeNames(c.req.param('workspace'), body.nativeNames);
        return c.json(await namesReport(c.req.param('workspace')));
      });
    },
    openapi: {
      '/api/v1/workspaces': {
        get: { summary: 'List workspaces', tags: ['plugins'] },
        post: { summary: 'Create a workspace', tags: ['plugins'], requestBody: scopeCreateBodySchema },
      },
      '/api/v1/workspaces/:workspace/projects': {
        get: { summary: "List a workspace's projects", tags: ['plugins'] },
        post: { summary: 'Create a project', tags: ['plugins'], requestBody: scopeCreateBodySchema },
      },
      '/api/v1/workspaces/:workspace/names': {
        get: { summary: 'Tool names shown natively or kept plugin__-prefixed (and why) in the workspace (issue #12)', tags: ['plugins'] },
      },
      '/api/v1/workspaces/:workspace/native-names': {
        put: { summary: "Show plugins' own names in the workspace's MCP sessions where unambiguous", tags: ['plugins'], requestBody: nativeNamesBodySchema },
      },
      '/api/v1/workspaces/:workspace/tools': {
        get: { summary: 'Tools of every plugin in effect for the workspace (and ?project=)', tags: ['plugins'], parameters: [{ name: 'project', in: 'query' }] },
      },
    },
  };
}
