/**
 * @module catalog/categories
 * The category tree (seed 001 §4.2 table 1, §8.2): create, read as a tree or flat, update
 * (re-parenting refuses cycles), delete, and the categories a page resolves to through its
 * context mappings (§5.3).
 */
import { z } from 'zod';
import { invalidInput, notFound } from '../core/errors.ts';
import { pluginNameSchema } from '../core/name-schemas.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import {
  categoryAncestorIds, deleteCategory, findCategoryById, insertCategory, listCategories, updateCategory,
  type CategoryRecord,
} from '../store/repositories/categories.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import { listPageMappings } from '../store/repositories/page-mappings.ts';
import { findPluginByName } from '../store/repositories/plugin-refs.ts';
import { conflictOnDuplicate, type CatalogContext } from './context.ts';
import { matchPageMappings, parsePagePattern, type PagePatternMode } from './page-pattern.ts';
import { uuidSchema } from './schemas.ts';

/** A category name: free text without leading/trailing spaces, 1–200 characters. */
export const categoryNameSchema = z.string().min(1).max(200).refine((name) => name.trim() === name, 'category names must not start or end with spaces');

/** Input of `createCategory`. */
export const createCategoryInputSchema = z.strictObject({
  name: categoryNameSchema,
  displayName: z.string().min(1).max(200).optional(),
  description: z.string().max(2_000).default(''),
  parentId: uuidSchema.nullable().optional(),
  /** The plugin the category belongs to; absent makes a global category. */
  pluginName: pluginNameSchema.optional(),
});
/** `createCategory` input. */
export type CreateCategoryInput = z.input<typeof createCategoryInputSchema>;

/** Input of `updateCategory` (null clears `displayName` / detaches from the parent). */
export const categoryPatchSchema = z.strictObject({
  name: categoryNameSchema.optional(),
  displayName: z.string().min(1).max(200).nullable().optional(),
  description: z.string().max(2_000).optional(),
  parentId: uuidSchema.nullable().optional(),
});
/** `updateCategory` input. */
export type CategoryPatch = z.input<typeof categoryPatchSchema>;

/** A category with its children, as the tree view returns it. */
export interface CategoryNode extends CategoryRecord {
  children: CategoryNode[];
}

/** A category a page resolves to, with the mapping that matched. */
export interface PageCategoryMatch {
  categoryId: string;
  categoryName: string;
  mappingId: string;
  pagePattern: string;
  mode: PagePatternMode;
  priority: number;
  pluginName: string | null;
}

/** Options of `listCategories`, `categoryTree` and `categoriesForPage`. */
export interface CategoryScope {
  /** Restrict to this plugin's categories (and mappings) plus the global ones. */
  pluginName?: string;
}

/** The category operations of the catalog service. */
export interface CategoryOperations {
  /** Creates a category, optionally under a parent and owned by a plugin. */
  createCategory(input: CreateCategoryInput): Promise<CategoryRecord>;
  /** A category by id. */
  getCategory(id: string): Promise<CategoryRecord>;
  /** Every category, flat, ordered by name. */
  listCategories(scope?: CategoryScope): Promise<CategoryRecord[]>;
  /** Every category as a forest of roots with nested children. */
  categoryTree(scope?: CategoryScope): Promise<CategoryNode[]>;
  /** Renames, re-describes or re-parents a category; a parent that would make a cycle is refused. */
  updateCategory(id: string, patch: CategoryPatch): Promise<CategoryRecord>;
  /** Deletes a category: its children become roots, its tools uncategorised, its mappings removed. */
  deleteCategory(id: string): Promise<void>;
  /** The categories whose mappings match `page`, best first (seed 001 §5.3). */
  categoriesForPage(page: string, scope?: CategoryScope): Promise<PageCategoryMatch[]>;
}

/** Builds nested nodes from a flat list; a category whose parent is not in the list is a root. */
export function buildCategoryTree(categories: readonly CategoryRecord[]): CategoryNode[] {
  const nodes = new Map<string, CategoryNode>(categories.map((c) => [c.id, { ...c, children: [] }]));
  const roots: CategoryNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parentId === null ? undefined : nodes.get(node.parentId);
    if (parent === undefined) roots.push(node);
    else parent.children.push(node);
  }
  return roots;
}

async function requireCategory(db: Queryable, id: string): Promise<CategoryRecord> {
  const category = isUuid(id) ? await findCategoryById(db, id) : undefined;
  if (category === undefined) throw notFound('category', id);
  return category;
}

async function pluginIdOf(db: Queryable, pluginName: string | undefined): Promise<string | undefined> {
  if (pluginName === undefined) return undefined;
  const plugin = await findPluginByName(db, parsePluginName(pluginName));
  if (plugin === undefined) throw notFound('plugin', pluginName);
  return plugin.id;
}

function parsePluginName(name: string): string {
  return parseOrThrow(pluginNameSchema, name, 'plugin name');
}

/** Throws `invalid_input` when making `parentId` the parent of `id` would close a cycle. */
async function assertNoCycle(db: Queryable, id: string, parentId: string): Promise<void> {
  if (parentId === id) throw invalidInput('a category cannot be its own parent', { id, parentId });
  const ancestors = await categoryAncestorIds(db, parentId);
  if (ancestors.includes(id)) {
    throw invalidInput('that parent would make a cycle in the category tree', { id, parentId, path: ancestors });
  }
}

/** Builds the category operations over the shared context. */
export function createCategoryOperations(context: CatalogContext): CategoryOperations {
  const { db } = context;
  const duplicate = (name: string) => `a category named '${name}' already exists in that scope`;

  return {
    async createCategory(raw) {
      const input = parseOrThrow(createCategoryInputSchema, raw, 'category');
      const category = await db.transaction(async (tx) => {
        const pluginId = (await pluginIdOf(tx, input.pluginName)) ?? null;
        const parentId = input.parentId ?? null;
        if (parentId !== null) await requireCategory(tx, parentId);
        const id = await conflictOnDuplicate(
          () => insertCategory(tx, { name: input.name, displayName: input.displayName ?? null, description: input.description, parentId, pluginId }, context.now()),
          duplicate(input.name),
        );
        return (await findCategoryById(tx, id))!;
      });
      context.emit({ kind: 'categories', ids: [category.id] });
      return category;
    },

    async getCategory(id) {
      return requireCategory(db, id);
    },

    async listCategories(scope = {}) {
      return listCategories(db, { pluginId: await pluginIdOf(db, scope.pluginName) });
    },

    async categoryTree(scope = {}) {
      return buildCategoryTree(await listCategories(db, { pluginId: await pluginIdOf(db, scope.pluginName) }));
    },

    async updateCategory(id, raw) {
      const patch = parseOrThrow(categoryPatchSchema, raw, 'category patch');
      const category = await db.transaction(async (tx) => {
        const current = await requireCategory(tx, id);
        const parentId = patch.parentId === undefined ? current.parentId : patch.parentId;
        if (parentId !== null && parentId !== current.parentId) {
          await requireCategory(tx, parentId);
          await assertNoCycle(tx, current.id, parentId);
        }
        const name = patch.name ?? current.name;
        await conflictOnDuplicate(
          () => updateCategory(tx, current.id, {
            name,
            displayName: patch.displayName === undefined ? current.displayName : patch.displayName,
            description: patch.description ?? current.description,
            parentId,
          }, context.now()),
          duplicate(name),
        );
        return (await findCategoryById(tx, current.id))!;
      });
      context.emit({ kind: 'categories', ids: [category.id] });
      return category;
    },

    async deleteCategory(id) {
      const category = await requireCategory(db, id);
      if (!(await deleteCategory(db, category.id))) throw notFound('category', id);
      // Tools lost their category and mappings to it were removed (ON DELETE SET NULL / CASCADE).
      context.emit({ kind: 'categories', ids: [category.id] }, { kind: 'mappings' }, { kind: 'tools' });
    },

    async categoriesForPage(page, scope = {}) {
      const text = parseOrThrow(z.string().min(1).max(2_000), page, 'page');
      const pluginId = await pluginIdOf(db, scope.pluginName);
      const mappings = await listPageMappings(db);
      const inScope = pluginId === undefined ? mappings : mappings.filter((m) => m.pluginId === null || m.pluginId === pluginId);
      return matchPageMappings(inScope, text).map((mapping) => ({
        categoryId: mapping.categoryId,
        categoryName: mapping.categoryName,
        mappingId: mapping.id,
        pagePattern: mapping.pagePattern,
        mode: parsePagePattern(mapping.pagePattern).mode,
        priority: mapping.priority,
        pluginName: mapping.pluginName,
      }));
    },
  };
}
