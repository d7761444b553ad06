/**
 * @module api/routes/plugins
 * Plugins (DESIGN §3.5, seed 003): install, list, show, update, remove, enable / disable per
 * workspace or project, re-discovery, credentials (write-only: values never come back),
 * workspaces and projects, the marketplace, and the Plugin Intelligence Document endpoints
 * of seed 000 §6.3, and plugin health (runtime issue "Health": live process state, breakers,
 * crash loops, persisted call aggregates). Reads need the `read` scope, writes `admin`.
 * A tenant key (api/tenancy) reads only plugins with a tool it may see, and of those only its
 * own workspace's enablements, a count of its visible tools, and intelligence documents whose
 * tool definitions are cut to its visible tools.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { ErrorCodes, QuiverError, isQuiverError } from '../../core/errors.ts';
import { healthQuerySchema, type PluginHealthSource } from '../../plugins/health.ts';
import type { PluginDetails, PluginService } from '../../plugins/service.ts';
import type { IntelligenceRecord } from '../../store/repositories/plugins.ts';
import type { Principal } from '../../access/api-keys.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../http.ts';
import {
  TENANT_DEFAULT_WORKSPACE, assertVisible, isTenantKey, refuseTenant, unrestrictedVisibility, type TenantVisibility,
} from '../tenancy.ts';
import type { ApiRouteModule } from '../app.ts';

const nameSchema = z.string().min(1).max(64);
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
  trusted: z.boolean().optional(),
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

/** Body of the enable / disable endpoints. */
export const scopeBodySchema = z.strictObject({ workspace: nameSchema.optional(), project: nameSchema.optional() });

/** Body of `PUT /api/v1/plugins/:id/secrets/:key`. */
export const secretBodySchema = z.strictObject({ value: z.string().min(1).max(65_536) });

/** Body of `PUT /api/v1/plugins/:id/env/:key`: a plain, non-secret setting (may be empty). */
export const envBodySchema = z.strictObject({ value: z.string().max(65_536) });

/** Body of the workspace and project create endpoints. */
export const scopeCreateBodySchema = z.strictObject({ name: nameSchema, displayName: z.string().min(1).max(200).optional() });

const searchQuerySchema = z.object({ q: z.string().min(1).max(500), limit: z.coerce.number().int().min(1).max(100).default(10) });
const marketplaceQuerySchema = z.object({ q: z.string().min(1).max(500).optional(), limit: z.coerce.number().int().min(1).max(100).default(20) });
const toolsQuerySchema = z.object({ project: nameSchema.optional() });

/** A PID with its tool definitions cut to `names` (a document without a tool list is unchanged). */
export function withToolsOnly(record: IntelligenceRecord, names: ReadonlySet<string>): IntelligenceRecord {
  const tools = record.pid['tools'];
  if (!Array.isArray(tools)) return record;
  const kept = tools.filter((tool: unknown) => {
    const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
    return typeof name === 'string' && names.has(name);
  });
  return { ...record, pid: { ...record.pid, tools: kept } };
}

// Install failures map to 422 through the shared status map (api/http.ts), with details.step.
async function installing(c: Context<ApiEnv>, work: () => Promise<unknown>, status: 200 | 201 = 200): Promise<Response> {
  return c.json(await work(), status);
}

/** Routes under /api/v1/plugins, /api/v1/workspaces and /api/v1/marketplace. */
export function pluginRoutes(services: { plugins: PluginService; tenancy?: TenantVisibility; health?: PluginHealthSource }): ApiRouteModule {
  const { plugins } = services;
  /** The health source, or `unavailable` when this hub was wired without one. */
  const health = (): PluginHealthSource => {
    if (services.health === undefined) throw new QuiverError(ErrorCodes.unavailable, 'plugin health is not wired into this hub');
    return services.health;
  };
  const tenancy = services.tenancy ?? unrestrictedVisibility;
  /** Visible plugin names for the caller (undefined: unrestricted), after the scope check. */
  const visiblePlugins = (c: Context<ApiEnv>) => tenancy.visiblePluginNames(principalWith(c, 'read'));
  /** A plugin reference (id or name) the caller may see, else not_found. */
  async function visiblePlugin(c: Context<ApiEnv>): Promise<string> {
    const reference = c.req.param('id')!;
    const visible = await visiblePlugins(c);
    if (visible !== undefined) assertVisible(visible, (await plugins.show(reference)).plugin.name, 'plugin');
    return reference;
  }
  /** Names of a plugin's tools the caller may see, or undefined when unrestricted. */
  async function visibleToolNames(principal: Principal, plugin: string): Promise<ReadonlySet<string> | undefined> {
    const visibleTools = await tenancy.visibleToolIds(principal);
    if (visibleTools === undefined) return undefined;
    return new Set((await plugins.tools(plugin)).filter((tool) => visibleTools.has(tool.id)).map((tool) => tool.name));
  }
  /** A PID as the caller may read it. */
  async function intelligenceFor(principal: Principal, record: IntelligenceRecord): Promise<IntelligenceRecord> {
    const names = await visibleToolNames(principal, record.pluginName);
    return names === undefined ? record : withToolsOnly(record, names);
  }
  /** A plugin's details as the caller may read them: a tenant's own workspace and visible tools only. */
  async function detailsFor(principal: Principal, details: PluginDetails): Promise<PluginDetails> {
    const names = await visibleToolNames(principal, details.plugin.name);
    if (names === undefined) return details;
    const own = principal.workspaceId === null
      ? TENANT_DEFAULT_WORKSPACE
      : (await plugins.listWorkspaces()).find((workspace) => workspace.id === principal.workspaceId)?.name;
    // Settings and the state folder are the operator's (they may name internal hosts and host paths).
    return { ...details, enablements: details.enablements.filter((row) => row.workspace === own), toolCount: names.size, env: [], stateDir: null };
  }
  return {
    register(app: Hono<ApiEnv>) {
      // Static paths first, so `intelligence` is never read as a plugin id.
      app.get('/api/v1/plugins/intelligence/export', async (c) => {
        const visible = await visiblePlugins(c);
        const documents = await plugins.exportIntelligence();
        if (visible === undefined) return c.json({ documents });
        const principal = principalWith(c, 'read');
        const shown = documents.filter((d) => visible.has(d.pluginName));
        return c.json({ documents: await Promise.all(shown.map((d) => intelligenceFor(principal, d))) });
      });
      app.get('/api/v1/plugins/intelligence/search', async (c) => {
        const visible = await visiblePlugins(c);
        const query = readQuery(c, searchQuerySchema);
        const results = await plugins.searchIntelligence(query.q, query.limit);
        if (visible === undefined) return c.json({ results });
        const principal = principalWith(c, 'read');
        const shown = results.filter((r) => visible.has(r.plugin));
        return c.json({ results: await Promise.all(shown.map(async (r) => ({ ...r, document: await intelligenceFor(principal, r.document) }))) });
      });
      // Static too: registered before `/api/v1/plugins/:id` so `health` is never read as a plugin id.
      app.get('/api/v1/plugins/health', async (c) => {
        const visible = await visiblePlugins(c);
        const query = readQuery(c, healthQuerySchema);
        return c.json(await health().report({ window: query.window, visible }));
      });

      app.get('/api/v1/plugins', async (c) => {
        const visible = await visiblePlugins(c);
        const list = await plugins.list({ includeRemoved: c.req.query('includeRemoved') === 'true' });
        return c.json({ plugins: visible ? list.filter((p) => visible.has(p.name)) : list });
      });
      app.post('/api/v1/plugins', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, addPluginBodySchema, 'plugin install');
        const { source, ...options } = body;
        return installing(c, () => plugins.add(source, options), 201);
      });
      app.get('/api/v1/plugins/:id', async (c) => {
        return c.json(await detailsFor(principalWith(c, 'read'), await plugins.show(await visiblePlugin(c))));
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
        const tools = await plugins.tools(await visiblePlugin(c));
        const visibleTools = await tenancy.visibleToolIds(principalWith(c, 'read'));
        return c.json({ tools: visibleTools ? tools.filter((t) => visibleTools.has(t.id)) : tools });
      });
      app.get('/api/v1/plugins/:id/calls', async (c) => {
        const reference = await visiblePlugin(c);
        const query = readQuery(c, healthQuerySchema);
        const report = await health().toolCalls(reference, { window: query.window });
        // A tenant sees the calls of the tools it can see (as `/tools` lists them), no others.
        const visibleTools = await tenancy.visibleToolIds(principalWith(c, 'read'));
        if (visibleTools === undefined) return c.json(report);
        const names = new Set((await plugins.tools(reference)).filter((t) => visibleTools.has(t.id)).map((t) => t.name));
        return c.json({ ...report, tools: report.tools.filter((t) => names.has(t.toolName)) });
      });
      app.post('/api/v1/plugins/:id/enable', async (c) => {
        principalWith(c, 'admin');
        const scope = await readOptionalJson(c, scopeBodySchema);
        await plugins.enable(c.req.param('id'), scope);
        return c.json({ enablements: (await plugins.show(c.req.param('id'))).enablements });
      });
      app.post('/api/v1/plugins/:id/disable', async (c) => {
        principalWith(c, 'admin');
        const scope = await readOptionalJson(c, scopeBodySchema);
        await plugins.disable(c.req.param('id'), scope);
        return c.json({ enablements: (await plugins.show(c.req.param('id'))).enablements });
      });
      app.post('/api/v1/plugins/:id/sync', async (c) => {
        principalWith(c, 'admin');
        return installing(c, () => plugins.sync(c.req.param('id')));
      });
      app.put('/api/v1/plugins/:id/secrets/:key', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, secretBodySchema, 'secret');
        return c.json(await plugins.setSecret(c.req.param('id'), c.req.param('key'), body.value));
      });
      app.delete('/api/v1/plugins/:id/secrets/:key', async (c) => {
        principalWith(c, 'admin');
        const deleted = await plugins.deleteSecret(c.req.param('id'), c.req.param('key'));
        return deleted ? c.body(null, 204) : c.json({ error: { code: 'not_found', message: `secret '${c.req.param('key')}' is not set` } }, 404);
      });
      // Non-secret settings (plugins/plugin-env.ts): values in plain, admin only like secrets.
      app.get('/api/v1/plugins/:id/env', async (c) => {
        principalWith(c, 'admin');
        return c.json({ env: await plugins.listEnv(c.req.param('id')) });
      });
      app.put('/api/v1/plugins/:id/env/:key', async (c) => {
        principalWith(c, 'admin');
        const body = await readJson(c, envBodySchema, 'setting');
        return c.json(await plugins.setEnv(c.req.param('id'), c.req.param('key'), body.value));
      });
      app.delete('/api/v1/plugins/:id/env/:key', async (c) => {
        principalWith(c, 'admin');
        const deleted = await plugins.unsetEnv(c.req.param('id'), c.req.param('key'));
        return deleted ? c.body(null, 204) : c.json({ error: { code: 'not_found', message: `setting '${c.req.param('key')}' is not set` } }, 404);
      });

      app.post('/api/v1/plugins/:id/intelligence', async (c) => {
        principalWith(c, 'admin');
        return c.json(await plugins.generateIntelligence(c.req.param('id')), 201);
      });
      app.get('/api/v1/plugins/:id/intelligence', async (c) => {
        return c.json(await intelligenceFor(principalWith(c, 'read'), await plugins.getIntelligence(await visiblePlugin(c))));
      });
      app.put('/api/v1/plugins/:id/intelligence', async (c) => {
        principalWith(c, 'admin');
        const document = await readJson(c, z.record(z.string(), z.unknown()), 'intelligence document');
        return c.json(await plugins.putIntelligence(c.req.param('id'), document));
      });

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

      app.post('/api/v1/marketplace/import', async (c) => {
        principalWith(c, 'admin');
        const document = await readJson(c, z.unknown(), 'marketplace catalog');
        return c.json(await plugins.importMarketplace(document, { source: 'api' }));
      });
      app.get('/api/v1/marketplace', async (c) => {
        principalWith(c, 'read');
        const query = readQuery(c, marketplaceQuerySchema);
        if (query.q === undefined) return c.json({ servers: (await plugins.listMarketplace()).slice(0, query.limit) });
        return c.json({ results: await plugins.searchMarketplace(query.q, query.limit) });
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
      '/api/v1/plugins/health': {
        get: {
          summary: 'Per plugin: status, live process health (state, pids, breakers, crash loop, score, p50/p95) and persisted call aggregates over ?window= (default 1h)',
          tags: ['plugins'],
          parameters: [{ name: 'window', in: 'query' }],
        },
      },
      '/api/v1/plugins/:id/calls': {
        get: { summary: "Per-tool call aggregates of a plugin over ?window= (default 1h; e.g. 15m, 24h, 7d)", tags: ['plugins'], parameters: [{ name: 'window', in: 'query' }] },
      },
      '/api/v1/plugins/:id/enable': { post: { summary: 'Enable in a workspace (all its projects) or one project', tags: ['plugins'], requestBody: scopeBodySchema } },
      '/api/v1/plugins/:id/disable': { post: { summary: 'Disable in a workspace, or opt one project out', tags: ['plugins'], requestBody: scopeBodySchema } },
      '/api/v1/plugins/:id/sync': { post: { summary: 'Re-discover from the installed folder and re-sync the catalog', tags: ['plugins'] } },
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
      '/api/v1/plugins/:id/intelligence': {
        post: { summary: 'Generate a PID from the catalog tools and manifest (seed 000 §6.3)', tags: ['intelligence'], responses: { '201': 'Generated' } },
        get: { summary: 'Retrieve the PID', tags: ['intelligence'] },
        put: { summary: 'Replace the PID (validated; hard errors are rejected with the full list)', tags: ['intelligence'] },
      },
      '/api/v1/plugins/intelligence/export': { get: { summary: 'Batch export of every PID', tags: ['intelligence'] } },
      '/api/v1/plugins/intelligence/search': {
        get: { summary: 'Lexical search over PIDs', tags: ['intelligence'], parameters: [{ name: 'q', in: 'query', required: true }] },
      },
      '/api/v1/workspaces': {
        get: { summary: 'List workspaces', tags: ['plugins'] },
        post: { summary: 'Create a workspace', tags: ['plugins'], requestBody: scopeCreateBodySchema },
      },
      '/api/v1/workspaces/:workspace/projects': {
        get: { summary: "List a workspace's projects", tags: ['plugins'] },
        post: { summary: 'Create a project', tags: ['plugins'], requestBody: scopeCreateBodySchema },
      },
      '/api/v1/workspaces/:workspace/tools': {
        get: { summary: 'Tools of every plugin in effect for the workspace (and ?project=)', tags: ['plugins'], parameters: [{ name: 'project', in: 'query' }] },
      },
      '/api/v1/marketplace/import': { post: { summary: 'Import MCP Registry server.json entries (one, an array, or {servers})', tags: ['marketplace'] } },
      '/api/v1/marketplace': {
        get: { summary: 'List, or search with ?q=, installable plugins', tags: ['marketplace'], parameters: [{ name: 'q', in: 'query' }, { name: 'limit', in: 'query' }] },
      },
    },
  };
}

/** An optional JSON body (enable/disable may be sent with none: the default workspace). */
async function readOptionalJson<S extends z.ZodType>(c: Context<ApiEnv>, schema: S): Promise<z.output<S>> {
  const length = c.req.header('content-length');
  if ((length === undefined || length === '0') && !c.req.header('content-type')) return schema.parse({});
  return readJson(c, schema, 'scope');
}
