/**
 * @module api/routes/catalog/categories
 * Categories and page mappings (seed 001 §8.2): the category tree (or `?flat=true`), the
 * categories mapped to a page, the mappings themselves, and their admin writes. A tenant key
 * reads only the categories holding a tool it may see (directly or through a sub-category, so
 * the tree stays whole) and the page mappings of those categories (issue #18 finding 5).
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { booleanFlag } from '../../../catalog/schemas.ts';
import { buildCategoryTree, categoryPatchSchema, createCategoryInputSchema } from '../../../catalog/categories.ts';
import { createPageMappingInputSchema, pageMappingPatchSchema } from '../../../catalog/page-mappings.ts';
import type { CategoryRecord } from '../../../store/repositories/categories.ts';
import type { Principal } from '../../../access/api-keys.ts';
import { principalWith, readQuery, type ApiEnv } from '../../http.ts';
import { assertVisible } from '../../tenancy.ts';
import type { ApiRouteModule } from '../../app.ts';
import { BASE, registerAdminWrites, type CatalogRouteParts } from './parts.ts';

const categoryListQuerySchema = z.strictObject({
  flat: booleanFlag.default(false),
  pluginName: z.string().min(1).max(64).optional(),
});
const pluginScopeQuerySchema = z.strictObject({ pluginName: z.string().min(1).max(64).optional() });
const mappingListQuerySchema = z.strictObject({
  pluginName: z.string().min(1).max(64).optional(),
  categoryId: z.string().min(1).max(64).optional(),
});

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

/** Routes under /internal/tool-registry/categories and /internal/tool-registry/page-mappings. */
export function categoryRoutes({ catalog, tenancy }: CatalogRouteParts): ApiRouteModule {
  /** Category ids the caller may see (undefined: unrestricted); a hidden `pluginName` reads as unknown. */
  async function categoryVisibility(principal: Principal, pluginName: string | undefined): Promise<ReadonlySet<string> | undefined> {
    const holding = await tenancy.visibleCategoryIds(principal);
    if (holding === undefined) return undefined;
    if (pluginName !== undefined) assertVisible(await tenancy.visiblePluginNames(principal), pluginName, 'plugin');
    return visibleCategories(await catalog.listCategories(), holding);
  }
  return {
    register(app: Hono<ApiEnv>) {
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
      registerAdminWrites(app, { path: `${BASE}/categories`, noun: 'category', field: 'category' }, {
        create: { schema: createCategoryInputSchema, run: (input) => catalog.createCategory(input) },
        update: { schema: categoryPatchSchema, run: (id, patch) => catalog.updateCategory(id, patch) },
        remove: (id) => catalog.deleteCategory(id),
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
      registerAdminWrites(app, { path: `${BASE}/page-mappings`, noun: 'page mapping', field: 'mapping' }, {
        create: { schema: createPageMappingInputSchema, run: (input) => catalog.createPageMapping(input) },
        update: { schema: pageMappingPatchSchema, run: (id, patch) => catalog.updatePageMapping(id, patch) },
        remove: (id) => catalog.deletePageMapping(id),
      });
    },
    openapi: {
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
    },
  };
}
