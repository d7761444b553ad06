/**
 * @module catalog/page-mappings
 * Context ("page") mapping CRUD (seed 001 §8.2): a page pattern in one of the four modes
 * (`page-pattern.ts`) points at a category with a priority, optionally owned by a plugin.
 */
import { z } from 'zod';
import { invalidInput, notFound } from '../core/errors.ts';
import { pluginNameSchema } from '../core/name-schemas.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import { findCategoryById, resolveCategoryByName } from '../store/repositories/categories.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import {
  deletePageMapping, findPageMappingById, insertPageMapping, listPageMappings, updatePageMapping,
  type PageMappingRecord,
} from '../store/repositories/page-mappings.ts';
import { findPluginByName } from '../store/repositories/plugin-refs.ts';
import { conflictOnDuplicate, type CatalogContext } from './context.ts';
import { pagePatternSchema } from './page-pattern.ts';
import { uuidSchema } from './schemas.ts';

const prioritySchema = z.number().int().min(-1_000_000).max(1_000_000);

/** Input of `createPageMapping`: the category by id or by name (the plugin's, then a global one). */
export const createPageMappingInputSchema = z
  .strictObject({
    pagePattern: pagePatternSchema,
    categoryId: uuidSchema.optional(),
    category: z.string().min(1).max(200).optional(),
    pluginName: pluginNameSchema.optional(),
    priority: prioritySchema.default(0),
  })
  .refine((input) => (input.categoryId === undefined) !== (input.category === undefined), {
    message: 'give exactly one of categoryId or category',
    path: ['categoryId'],
  });
/** `createPageMapping` input. */
export type CreatePageMappingInput = z.input<typeof createPageMappingInputSchema>;

/** Input of `updatePageMapping`. */
export const pageMappingPatchSchema = z
  .strictObject({
    pagePattern: pagePatternSchema.optional(),
    categoryId: uuidSchema.optional(),
    category: z.string().min(1).max(200).optional(),
    priority: prioritySchema.optional(),
  })
  .refine((patch) => patch.categoryId === undefined || patch.category === undefined, {
    message: 'give at most one of categoryId or category',
    path: ['categoryId'],
  });
/** `updatePageMapping` input. */
export type PageMappingPatch = z.input<typeof pageMappingPatchSchema>;

/** Filters of `listPageMappings`. */
export interface PageMappingFilter {
  pluginName?: string;
  categoryId?: string;
}

/** The mapping operations of the catalog service. */
export interface PageMappingOperations {
  /** Creates a mapping; the same (pattern, category, plugin) twice is a conflict. */
  createPageMapping(input: CreatePageMappingInput): Promise<PageMappingRecord>;
  /** A mapping by id. */
  getPageMapping(id: string): Promise<PageMappingRecord>;
  /** Mappings, highest priority first. */
  listPageMappings(filter?: PageMappingFilter): Promise<PageMappingRecord[]>;
  /** Changes a mapping's pattern, category or priority. */
  updatePageMapping(id: string, patch: PageMappingPatch): Promise<PageMappingRecord>;
  /** Deletes a mapping. */
  deletePageMapping(id: string): Promise<void>;
}

async function requireMapping(db: Queryable, id: string): Promise<PageMappingRecord> {
  const mapping = isUuid(id) ? await findPageMappingById(db, id) : undefined;
  if (mapping === undefined) throw notFound('page mapping', id);
  return mapping;
}

async function categoryIdFor(db: Queryable, byId: string | undefined, byName: string | undefined, pluginId: string | null): Promise<string | undefined> {
  if (byId !== undefined) {
    if ((await findCategoryById(db, byId)) === undefined) throw notFound('category', byId);
    return byId;
  }
  if (byName !== undefined) {
    const category = await resolveCategoryByName(db, byName, pluginId);
    if (category === undefined) throw notFound('category', byName);
    return category.id;
  }
  return undefined;
}

/** Builds the mapping operations over the shared context. */
export function createPageMappingOperations(context: CatalogContext): PageMappingOperations {
  const { db } = context;
  const duplicate = 'that page pattern already maps to that category';

  return {
    async createPageMapping(raw) {
      const input = parseOrThrow(createPageMappingInputSchema, raw, 'page mapping');
      const mapping = await db.transaction(async (tx) => {
        let pluginId: string | null = null;
        if (input.pluginName !== undefined) {
          const plugin = await findPluginByName(tx, input.pluginName);
          if (plugin === undefined) throw notFound('plugin', input.pluginName);
          pluginId = plugin.id;
        }
        const categoryId = (await categoryIdFor(tx, input.categoryId, input.category, pluginId))!;
        const id = await conflictOnDuplicate(
          () => insertPageMapping(tx, { pagePattern: input.pagePattern, categoryId, pluginId, priority: input.priority }, context.now()),
          duplicate,
        );
        return (await findPageMappingById(tx, id))!;
      });
      context.emit({ kind: 'mappings', ids: [mapping.id] });
      return mapping;
    },

    async getPageMapping(id) {
      return requireMapping(db, id);
    },

    async listPageMappings(filter = {}) {
      let pluginId: string | undefined;
      if (filter.pluginName !== undefined) {
        const plugin = await findPluginByName(db, parseOrThrow(pluginNameSchema, filter.pluginName, 'plugin name'));
        if (plugin === undefined) throw notFound('plugin', filter.pluginName);
        pluginId = plugin.id;
      }
      if (filter.categoryId !== undefined && !isUuid(filter.categoryId)) throw invalidInput('categoryId must be a UUID');
      return listPageMappings(db, { pluginId, categoryId: filter.categoryId });
    },

    async updatePageMapping(id, raw) {
      const patch = parseOrThrow(pageMappingPatchSchema, raw, 'page mapping patch');
      const mapping = await db.transaction(async (tx) => {
        const current = await requireMapping(tx, id);
        const categoryId = (await categoryIdFor(tx, patch.categoryId, patch.category, current.pluginId)) ?? current.categoryId;
        await conflictOnDuplicate(
          () => updatePageMapping(tx, current.id, {
            pagePattern: patch.pagePattern ?? current.pagePattern,
            categoryId,
            priority: patch.priority ?? current.priority,
          }, context.now()),
          duplicate,
        );
        return (await findPageMappingById(tx, current.id))!;
      });
      context.emit({ kind: 'mappings', ids: [mapping.id] });
      return mapping;
    },

    async deletePageMapping(id) {
      const mapping = await requireMapping(db, id);
      if (!(await deletePageMapping(db, mapping.id))) throw notFound('page mapping', id);
      context.emit({ kind: 'mappings', ids: [mapping.id] });
    },
  };
}
