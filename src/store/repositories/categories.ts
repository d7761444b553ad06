/**
 * @module store/repositories/categories
 * The category tree (seed 001 §4.2, table 1). A category belongs to a plugin or is global
 * (`plugin_id` NULL); names are unique per plugin. `parent_category_id` makes the tree.
 */
import type { Queryable } from '../database.ts';
import { NIL_UUID, jsonParam, timeParam, toDate } from './mapping.ts';

/** A stored category. */
export interface CategoryRecord {
  id: string;
  name: string;
  displayName: string | null;
  description: string;
  parentId: string | null;
  pluginId: string | null;
  pluginName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The fields written for a category. */
export interface CategoryWrite {
  name: string;
  displayName: string | null;
  description: string;
  parentId: string | null;
  pluginId: string | null;
}

interface CategoryRow {
  id: string;
  name: string;
  display_name: string | null;
  description: string;
  parent_category_id: string | null;
  plugin_id: string | null;
  plugin_name: string | null;
  created_at: unknown;
  updated_at: unknown;
}

const SELECT_CATEGORIES = `SELECT c.id, c.name, c.display_name, c.description, c.parent_category_id, c.plugin_id,
  p.name AS plugin_name, c.created_at, c.updated_at
  FROM tool_categories c LEFT JOIN plugins p ON p.id = c.plugin_id`;

function toCategoryRecord(row: CategoryRow): CategoryRecord {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    description: row.description,
    parentId: row.parent_category_id,
    pluginId: row.plugin_id,
    pluginName: row.plugin_name,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** Finds a category by id. */
export async function findCategoryById(db: Queryable, id: string): Promise<CategoryRecord | undefined> {
  const { rows } = await db.query<CategoryRow>(`${SELECT_CATEGORIES} WHERE c.id = $1`, [id]);
  return rows[0] === undefined ? undefined : toCategoryRecord(rows[0]);
}

/**
 * Finds a category by name as a plugin sees it: the plugin's own category first, then a
 * global one (core/tool.ts `category`). `pluginId` null looks at global categories only.
 */
export async function resolveCategoryByName(db: Queryable, name: string, pluginId: string | null): Promise<CategoryRecord | undefined> {
  const { rows } = await db.query<CategoryRow>(
    `${SELECT_CATEGORIES} WHERE c.name = $1 AND (c.plugin_id IS NULL OR c.plugin_id = $2::uuid)
     ORDER BY c.plugin_id IS NULL LIMIT 1`,
    [name, pluginId],
  );
  return rows[0] === undefined ? undefined : toCategoryRecord(rows[0]);
}

/** Every category (optionally those of one plugin plus the global ones), ordered by name. */
export async function listCategories(db: Queryable, options: { pluginId?: string | undefined } = {}): Promise<CategoryRecord[]> {
  const { rows } =
    options.pluginId === undefined
      ? await db.query<CategoryRow>(`${SELECT_CATEGORIES} ORDER BY c.name, p.name NULLS FIRST, c.id`)
      : await db.query<CategoryRow>(
          `${SELECT_CATEGORIES} WHERE c.plugin_id IS NULL OR c.plugin_id = $1 ORDER BY c.name, p.name NULLS FIRST, c.id`,
          [options.pluginId],
        );
  return rows.map(toCategoryRecord);
}

/** Inserts one category and returns it. */
export async function insertCategory(db: Queryable, category: CategoryWrite, now: Date): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO tool_categories (name, display_name, description, parent_category_id, plugin_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
    [category.name, category.displayName, category.description, category.parentId, category.pluginId, timeParam(now)],
  );
  return rows[0]!.id;
}

/** Rewrites a category's fields (not its plugin). Returns false when it does not exist. */
export async function updateCategory(db: Queryable, id: string, category: Omit<CategoryWrite, 'pluginId'>, now: Date): Promise<boolean> {
  const result = await db.query(
    `UPDATE tool_categories SET name = $2, display_name = $3, description = $4, parent_category_id = $5, updated_at = $6
     WHERE id = $1`,
    [id, category.name, category.displayName, category.description, category.parentId, timeParam(now)],
  );
  return result.affectedRows > 0;
}

/** Deletes a category; children become roots and tools lose it (ON DELETE SET NULL), its mappings go. */
export async function deleteCategory(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM tool_categories WHERE id = $1', [id]);
  return result.affectedRows > 0;
}

/** The ids on the path from `id` up to its root, `id` included (UNION stops on an existing cycle). */
export async function categoryAncestorIds(db: Queryable, id: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH RECURSIVE up(id, parent) AS (
       SELECT id, parent_category_id FROM tool_categories WHERE id = $1
       UNION
       SELECT c.id, c.parent_category_id FROM tool_categories c JOIN up ON c.id = up.parent)
     SELECT id FROM up`,
    [id],
  );
  return rows.map((row) => row.id);
}

/**
 * Upserts categories by (name, plugin) in one statement (seed 001 §9.1 step 4). Ids are chosen
 * by the caller for new rows, so parents declared in the same batch can be referenced.
 */
export async function upsertCategories(db: Queryable, categories: readonly (CategoryWrite & { id: string })[], now: Date): Promise<void> {
  if (categories.length === 0) return;
  const records = categories.map((c) => ({
    id: c.id,
    name: c.name,
    display_name: c.displayName,
    description: c.description,
    parent_category_id: c.parentId,
    plugin_id: c.pluginId,
  }));
  await db.query(
    `INSERT INTO tool_categories (id, name, display_name, description, parent_category_id, plugin_id, created_at, updated_at)
     SELECT x.id, x.name, x.display_name, x.description, x.parent_category_id, x.plugin_id, $2, $2
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, name text, display_name text, description text,
       parent_category_id uuid, plugin_id uuid)
     ON CONFLICT (name, (COALESCE(plugin_id, '${NIL_UUID}'::uuid))) DO UPDATE SET
       display_name = EXCLUDED.display_name, description = EXCLUDED.description,
       parent_category_id = EXCLUDED.parent_category_id, updated_at = EXCLUDED.updated_at`,
    [jsonParam(records), timeParam(now)],
  );
}
