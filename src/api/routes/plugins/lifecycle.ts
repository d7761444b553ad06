/**
 * @module api/routes/plugins/lifecycle
 * A plugin's life (DESIGN §3.5, seed 003): install, list, show, switch on or off everywhere,
 * update to a new ref or version, re-discover, remove; and its live catalog tools. Install
 * failures map to 422 with `details.step` through the shared status map (api/http.ts).
 * A tenant key sees only the plugins it may see, and of a plugin only its own workspace's
 * enablements and a count of its visible tools; settings and the state folder never.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { PluginDetails, PluginService } from '../../../plugins/service.ts';
import type { Principal } from '../../../access/api-keys.ts';
import { principalWith, readJson, type ApiEnv } from '../../http.ts';
import { TENANT_DEFAULT_WORKSPACE } from '../../tenancy.ts';
import type { ApiRouteModule } from '../../app.ts';
import { nameSchema, type PluginRouteParts } from './parts.ts';
import type { PluginVisibility } from './visibility.ts';

const stringMap = z.record(z.string().min(1).max(200), z.string().max(65_536)).refine((map) => Object.keys(map).length <= 100, 'at most 100 entries');

/** Body of `POST /api/v1/plugins`. */
export const addPluginBodySchema = z.strictObject({
  source: z.string().min(1).max(4_096),
  name: nameSchema.optional(),
  ref: z.string().min(1).max(255).optional(),
  /** A git source's plugin folder inside the repository (monorepos). */
  path: z.string().min(1).max(1_024).optional(),
  workspace: nameSchema.optional(),
  project: nameSchema.optional(),
  headers: stringMap.optional(),
  secrets: stringMap.optional(),
  args: z.array(z.string().max(4_096)).max(100).optional(),
  bin: z.string().min(1).max(200).optional(),
  /** `openapi:` sources: the API root operations are called on (issue #14). */
  baseUrl: z.url({ protocol: /^https?$/ }).max(2_048).optional(),
  trusted: z.boolean().optional(),
  /** Host paths to grant (issue #26): absolute, read-only unless mode 'rw'; the hub's own paths are refused. */
  mounts: z.array(z.strictObject({ path: z.string().min(1).max(4_096), mode: z.enum(['ro', 'rw']).default('ro') })).max(100).optional(),
});

/** Body of `PATCH /api/v1/plugins/:id`: a status switch and/or an update to a new ref or version. */
export const patchPluginBodySchema = z
  .strictObject({
    status: z.enum(['active', 'disabled']).optional(),
    update: z.boolean().optional(),
    ref: z.string().min(1).max(255).optional(),
    version: z.string().min(1).max(100).optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'give status, update, ref or version');

// Install failures map to 422 through the shared status map (api/http.ts), with details.step.
async function installing(c: Context<ApiEnv>, work: () => Promise<unknown>, status: 200 | 201 = 200): Promise<Response> {
  return c.json(await work(), status);
}

/** A plugin's details as the caller may read them: a tenant's own workspace and visible tools only. */
async function detailsFor(plugins: PluginService, visibility: PluginVisibility, principal: Principal, details: PluginDetails): Promise<PluginDetails> {
  const names = await visibility.toolNames(principal, details.plugin.name);
  if (names === undefined) return details;
  const own = principal.workspaceId === null
    ? TENANT_DEFAULT_WORKSPACE
    : (await plugins.listWorkspaces()).find((workspace) => workspace.id === principal.workspaceId)?.name;
  // Settings and the state folder are the operator's (they may name internal hosts and host paths).
  return { ...details, enablements: details.enablements.filter((row) => row.workspace === own), toolCount: names.size, env: [], stateDir: null, mounts: [] };
}

/** Install, list, show, change, update, remove and re-sync plugins; a plugin's tools. */
export function lifecycleRoutes({ plugins, tenancy, visibility }: PluginRouteParts): ApiRouteModule {
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/plugins', async (c) => {
        const visible = await visibility.pluginNames(c);
        const list = await plugins.list({ includeRemoved: c.req.query('includeRemoved') === 'true' });
        return c.json({ plugins: visible ? list.filter((p) => visible.has(p.name)) : list });
      });
      app.post('/api/v1/plugins', async (c) => {
        const principal = principalWith(c, 'admin');
        const body = await readJson(c, addPluginBodySchema, 'plugin install');
        const { source, ...options } = body;
        return installing(c, () => plugins.add(source, { ...options, mountActor: `key:${principal.keyId}:${principal.name}` }), 201);
      });
      app.get('/api/v1/plugins/:id', async (c) => {
        return c.json(await detailsFor(plugins, visibility, principalWith(c, 'read'), await plugins.show(await visibility.plugin(c))));
      });
      app.patch('/api/v1/plugins/:id', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, patchPluginBodySchema, 'plugin change');
        const id = c.req.param('id');
        return installing(c, async () => {
          let report: unknown;
          if (body.update === true || body.ref !== undefined || body.version !== undefined) {
            report = await plugins.update(id, { ref: body.ref, version: body.version });
          }
          if (body.status !== undefined) await plugins.setStatus(id, body.status);
          return { ...(report === undefined ? {} : { update: report }), ...(await plugins.show(id)) };
        });
      });
      app.delete('/api/v1/plugins/:id', async (c) => {
        principalWith(c, 'admin');
        await plugins.remove(c.req.param('id'));
        return c.body(null, 204);
      });
      app.get('/api/v1/plugins/:id/tools', async (c) => {
        const tools = await plugins.tools(await visibility.plugin(c));
        const visibleTools = await tenancy.visibleToolIds(principalWith(c, 'read'));
        return c.json({ tools: visibleTools ? tools.filter((t) => visibleTools.has(t.id)) : tools });
      });
      app.post('/api/v1/plugins/:id/sync', async (c) => {
        principalWith(c, 'admin');
        return installing(c, () => plugins.sync(c.req.param('id')));
      });
    },
    openapi: {
      '/api/v1/plugins': {
        get: { summary: 'List installed plugins (credentials listed by name, never by value)', tags: ['plugins'] },
        post: {
          summary: 'Install a plugin from a git URL, npm:<spec>, a folder, an http(s) MCP endpoint or market:<name>; 422 with details.step when it fails',
          tags: ['plugins'],
          requestBody: addPluginBodySchema,
          responses: { '201': 'Installed', '409': 'Name taken', '422': 'Install failed' },
        },
      },
      '/api/v1/plugins/:id': {
        get: { summary: 'A plugin with its enablements, secret keys and intelligence status', tags: ['plugins'] },
        patch: { summary: 'Enable/disable everywhere (status) and/or update to a new ref or version', tags: ['plugins'], requestBody: patchPluginBodySchema },
        delete: { summary: 'Remove: disable, soft-delete its tools, clean its cache', tags: ['plugins'], responses: { '204': 'Removed' } },
      },
      '/api/v1/plugins/:id/tools': { get: { summary: "The plugin's live catalog tools", tags: ['plugins'] } },
      '/api/v1/plugins/:id/sync': { post: { summary: 'Re-discover from the installed folder and re-sync the catalog', tags: ['plugins'] } },
    },
  };
}
