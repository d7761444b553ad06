/**
 * @module api/routes/catalog
 * The tool-registry admin API (seed 001 §8.1–8.3) and plugin self-registration (§8.5, §9):
 * - tools: list (filters, paging), detail, register, update (a new version), soft delete,
 *   version history, rollback;
 * - categories: tree (or `?flat=true`), create, update, delete, categories for a page;
 * - page mappings and visibility rules: list, create, update, delete;
 * - `POST /internal/tool-registry/plugins/sync`: a plugin declares its tools, categories and
 *   mappings. The seed's `X-Service-Key` is an API key with the `admin` scope here.
 * Reads need the `read` scope, writes `admin`. Bodies are validated by the catalog's own
 * schemas; the change is attributed to the calling key's name in the version history.
 * A tenant key (api/tenancy) reads only the tools it may see, the categories holding one of
 * them (directly or through a sub-category, so the tree stays whole) and the page mappings of
 * those categories (issue #18 finding 5); visibility rules are admin-only.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import {
  booleanFlag, createToolInputSchema, rollbackInputSchema, toolListQuerySchema, toolPatchSchema,
} from '../../catalog/schemas.ts';
import { buildCategoryTree, categoryPatchSchema, createCategoryInputSchema } from '../../catalog/categories.ts';
import { createPageMappingInputSchema, pageMappingPatchSchema } from '../../catalog/page-mappings.ts';
import {
  createVisibilityRuleInputSchema, visibilityRuleListQuerySchema, visibilityRulePatchSchema,
} from '../../catalog/visibility-rules.ts';
import { syncPayloadSchema } from '../../catalog/sync-schema.ts';
import type { CatalogService } from '../../catalog/service.ts';
import type { CategoryRecord } from '../../store/repositories/categories.ts';
import type { Principal } from '../../access/api-keys.ts';
import { principalWith, readJson, readQuery, type ApiEnv } from '../http.ts';
import { assertVisible, refuseTenant, unrestrictedVisibility, type TenantVisibility } from '../tenancy.ts';
import type { ApiRouteModule } from '../app.ts';

const BASE = '/internal/tool-registry';

const categoryListQuerySchema = z.strictObject({
  flat: booleanFlag.default(false),
  pluginName: z.string().min(1).max(64).optional(),
});
const pluginScopeQuerySchema = z.strictObject({ pluginName: z.string().min(1).max(64).optional() });
const mappingListQuerySchema = z.strictObject({
  pluginName: z.string().min(1).max(64).optional(),
  categoryId: z.string().min(1).max(64).optional(),
});
const rollbackBodySchema = rollbackInputSchema.omit({ changedBy: true });

/** The calling key's name, recorded as the author of a change. */
function author(c: Context<ApiEnv>): string {
  return `key:${principalWith(c, 'admin').name}`;
}

/**
 * The categories a tenant may see: those holding a visible tool and their ancestors (a parent
 * holds its sub-categories' tools). `categories` is every category the caller asked about.
 */
export function visibleCategories(categories: readonly CategoryRecord[], holding: ReadonlySet<string>): Set<string> {
  const parents = new Map(categories.map((category) => [category.id, category.parentId]));
  const visible = new Set<string>();
  for (const id of holding) {
    // The walk stops at a root or at a category already reached (the tree refuses cycles).
    for (let at: string | null | undefined = id; at && !visible.has(at); at = parents.get(at)) visible.add(at);
  }
  return visible;
}

/** Routes of the tool-registry admin API. */
export function catalogRoutes(services: { catalog: CatalogService; tenancy?: TenantVisibility }): ApiRouteModule {
  const { catalog } = services;
  const tenancy = services.tenancy ?? unrestrictedVisibility;

  /** Category ids the caller may see (undefined: unrestricted); a hidden `pluginName` reads as unknown. */
  async function categoryVisibility(principal: Principal, pluginName: string | undefined): Promise<ReadonlySet<string> | undefined> {
    const holding = await tenancy.visibleCategoryIds(principal);
    if (holding === undefined) return undefined;
    if (pluginName !== undefined) assertVisible(await tenancy.visiblePluginNames(principal), pluginName, 'plugin');
    return visibleCategories(await catalog.listCategories(), holding);
  }
  return {
    register(app: Hono<ApiEnv>) {
      // Tools (seed 001 §8.1).
      app.get(`${BASE}/tools`, async (c) => {
        const visible = await tenancy.visibleToolIds(principalWith(c, 'read'));
        const { items, ...page } = await catalog.listTools(readQuery(c, toolListQuerySchema), visible ? { onlyIds: visible } : {});
        return c.json({ tools: items, ...page });
      });
      app.get(`${BASE}/tools/:id`, async (c) => {
        assertVisible(await tenancy.visibleToolIds(principalWith(c, 'read')), c.req.param('id'), 'tool');
        return c.json({ tool: await catalog.getTool(c.req.param('id')) });
      });
      app.post(`${BASE}/tools`, async (c) => {
        const changedBy = author(c);
        const input = await readJson(c, createToolInputSchema, 'tool');
        return c.json({ tool: await catalog.createTool({ ...input, changedBy }) }, 201);
      });
      app.put(`${BASE}/tools/:id`, async (c) => {
        const changedBy = author(c);
        const patch = await readJson(c, toolPatchSchema, 'tool patch');
        return c.json({ tool: await catalog.updateTool(c.req.param('id'), { ...patch, changedBy }) });
      });
      app.delete(`${BASE}/tools/:id`, async (c) => {
        const changedBy = author(c);
        return c.json({ tool: await catalog.deleteTool(c.req.param('id'), { changedBy }) });
      });
      app.get(`${BASE}/tools/:id/versions`, async (c) => {
        assertVisible(await tenancy.visibleToolIds(principalWith(c, 'read')), c.req.param('id'), 'tool');
        return c.json({ versions: await catalog.listToolVersions(c.req.param('id')) });
      });
      app.post(`${BASE}/tools/:id/rollback`, async (c) => {
        const changedBy = author(c);
        const input = await readJson(c, rollbackBodySchema, 'rollback');
        return c.json({ tool: await catalog.rollbackTool(c.req.param('id'), { ...input, changedBy }) });
      });

      // Categories and page mappings (seed 001 §8.2).
      app.get(`${BASE}/categories`, async (c) => {
        const principal = principalWith(c, 'read');
        const { flat, pluginName } = readQuery(c, categoryListQuerySchema);
        const scope = pluginName === undefined ? {} : { pluginName };
        const visible = await categoryVisibility(principal, pluginName);
        if (visible === undefined) return c.json({ categories: flat ? await catalog.listCategories(scope) : await catalog.categoryTree(scope) });
        const categories = (await catalog.listCategories(scope)).filter((category) => visible.has(category.id));
        return c.json({ categories: flat ? categories : buildCategoryTree(categories) });
      });
      // A page key may contain slashes (`deals/pipeline`), so the parameter takes the rest of the path.
      app.get(`${BASE}/categories/for-page/:page{.+}`, async (c) => {
        const principal = principalWith(c, 'read');
        const { pluginName } = readQuery(c, pluginScopeQuerySchema);
        const page = c.req.param('page');
        const visible = await categoryVisibility(principal, pluginName);
        const matches = await catalog.categoriesForPage(page, pluginName === undefined ? {} : { pluginName });
        return c.json({ page, categories: visible ? matches.filter((match) => visible.has(match.categoryId)) : matches });
      });
      app.post(`${BASE}/categories`, async (c) => {
        principalWith(c, 'admin');
        return c.json({ category: await catalog.createCategory(await readJson(c, createCategoryInputSchema, 'category')) }, 201);
      });
      app.put(`${BASE}/categories/:id`, async (c) => {
        principalWith(c, 'admin');
        const patch = await readJson(c, categoryPatchSchema, 'category patch');
        return c.json({ category: await catalog.updateCategory(c.req.param('id'), patch) });
      });
      app.delete(`${BASE}/categories/:id`, async (c) => {
        principalWith(c, 'admin');
        await catalog.deleteCategory(c.req.param('id'));
        return c.body(null, 204);
      });
      app.get(`${BASE}/page-mappings`, async (c) => {
        const principal = principalWith(c, 'read');
        const { pluginName, categoryId } = readQuery(c, mappingListQuerySchema);
        const visible = await categoryVisibility(principal, pluginName);
        const mappings = await catalog.listPageMappings({
          ...(pluginName === undefined ? {} : { pluginName }),
          ...(categoryId === undefined ? {} : { categoryId }),
        });
        return c.json({ mappings: visible ? mappings.filter((mapping) => visible.has(mapping.categoryId)) : mappings });
      });
      app.post(`${BASE}/page-mappings`, async (c) => {
        principalWith(c, 'admin');
        return c.json({ mapping: await catalog.createPageMapping(await readJson(c, createPageMappingInputSchema, 'page mapping')) }, 201);
      });
      app.put(`${BASE}/page-mappings/:id`, async (c) => {
        principalWith(c, 'admin');
        const patch = await readJson(c, pageMappingPatchSchema, 'page mapping patch');
        return c.json({ mapping: await catalog.updatePageMapping(c.req.param('id'), patch) });
      });
      app.delete(`${BASE}/page-mappings/:id`, async (c) => {
        principalWith(c, 'admin');
        await catalog.deletePageMapping(c.req.param('id'));
        return c.body(null, 204);
      });

      // Visibility rules (seed 001 §8.3): active ones unless `?includeInactive=true`.
      app.get(`${BASE}/visibility-rules`, async (c) => {
        // Rules name other organisations and users: never shown to a tenant.
        refuseTenant(principalWith(c, 'read'), 'visibility rules');
        return c.json({ rules: await catalog.listVisibilityRules(readQuery(c, visibilityRuleListQuerySchema)) });
      });
      app.post(`${BASE}/visibility-rules`, async (c) => {
        principalWith(c, 'admin');
        return c.json({ rule: await catalog.createVisibilityRule(await readJson(c, createVisibilityRuleInputSchema, 'visibility rule')) }, 201);
      });
      app.put(`${BASE}/visibility-rules/:id`, async (c) => {
        principalWith(c, 'admin');
        const patch = await readJson(c, visibilityRulePatchSchema, 'visibility rule patch');
        return c.json({ rule: await catalog.updateVisibilityRule(c.req.param('id'), patch) });
      });
      app.delete(`${BASE}/visibility-rules/:id`, async (c) => {
        principalWith(c, 'admin');
        await catalog.deleteVisibilityRule(c.req.param('id'));
        return c.body(null, 204);
      });

      // Plugin self-registration (seed 001 §9).
      app.post(`${BASE}/plugins/sync`, async (c) => {
        principalWith(c, 'admin');
        return c.json({ report: await catalog.syncPlugin(await readJson(c, syncPayloadSchema, 'plugin sync payload')) });
      });
    },
    // A whole plugin's catalog (thousands of tools with schemas) exceeds the default 1 MiB.
    bodyLimits: { '/internal/tool-registry/plugins/sync': 32 * 1024 * 1024 },
    openapi: {
      [`${BASE}/tools`]: {
        get: { summary: 'List tools (filters: pluginId, pluginName, categoryId, category, status, embeddingStatus, orgId, search, includeDeleted; paging: limit ≤ 500, offset)', tags: ['catalog'] },
        post: { summary: 'Register a tool (version 1)', tags: ['catalog'], requestBody: createToolInputSchema, responses: { '201': 'Created', '404': 'Unknown plugin or category', '409': 'Already exists' } },
      },
      [`${BASE}/tools/:id`]: {
        get: { summary: 'Tool detail with full metadata', tags: ['catalog'], responses: { '200': 'OK', '404': 'Unknown tool' } },
        put: { summary: 'Update a tool (writes a version snapshot)', tags: ['catalog'], requestBody: toolPatchSchema },
        delete: { summary: 'Soft-delete a tool', tags: ['catalog'] },
      },
      [`${BASE}/tools/:id/versions`]: { get: { summary: 'Version history with changed fields', tags: ['catalog'] } },
      [`${BASE}/tools/:id/rollback`]: {
        post: { summary: 'Roll back to a version (as a new version)', tags: ['catalog'], requestBody: rollbackBodySchema },
      },
      [`${BASE}/categories`]: {
        get: { summary: 'Categories as a tree (or flat with ?flat=true)', tags: ['catalog'] },
        post: { summary: 'Create a category', tags: ['catalog'], requestBody: createCategoryInputSchema, responses: { '201': 'Created' } },
      },
      [`${BASE}/categories/:id`]: {
        put: { summary: 'Update a category (cycles refused)', tags: ['catalog'], requestBody: categoryPatchSchema },
        delete: { summary: 'Delete a category', tags: ['catalog'], responses: { '204': 'Deleted' } },
      },
      [`${BASE}/categories/for-page/:page`]: { get: { summary: 'Categories mapped to a page, best first', tags: ['catalog'] } },
      [`${BASE}/page-mappings`]: {
        get: { summary: 'Page-to-category mappings', tags: ['catalog'] },
        post: { summary: 'Create a mapping', tags: ['catalog'], requestBody: createPageMappingInputSchema, responses: { '201': 'Created' } },
      },
      [`${BASE}/page-mappings/:id`]: {
        put: { summary: 'Update a mapping', tags: ['catalog'], requestBody: pageMappingPatchSchema },
        delete: { summary: 'Delete a mapping', tags: ['catalog'], responses: { '204': 'Deleted' } },
      },
      [`${BASE}/visibility-rules`]: {
        get: { summary: 'Visibility rules in evaluation order', tags: ['catalog'] },
        post: { summary: 'Create a rule', tags: ['catalog'], requestBody: createVisibilityRuleInputSchema, responses: { '201': 'Created' } },
      },
      [`${BASE}/visibility-rules/:id`]: {
        put: { summary: 'Update a rule', tags: ['catalog'], requestBody: visibilityRulePatchSchema },
        delete: { summary: 'Delete a rule', tags: ['catalog'], responses: { '204': 'Deleted' } },
      },
      [`${BASE}/plugins/sync`]: {
        post: { summary: 'Plugin self-registration: differential sync of tools, categories and mappings', tags: ['catalog'], requestBody: syncPayloadSchema },
      },
    },
  };
}
