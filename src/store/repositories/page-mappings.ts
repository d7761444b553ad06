/**
 * @module store/repositories/page-mappings
 * Context ("page") mappings (seed 001 §4.2, table 3; §5.3): a page pattern points at a category
 * with a priority. Unique by (page_pattern, category, plugin). Matching is pure and lives in
 * the catalog (`page-pattern.ts`); this module only stores rows.
 */
import type { Queryable } from '../database.ts';
import { NIL_UUID, jsonParam, timeParam, toDate } from './mapping.ts';

/** A stored mapping with its category and plugin names joined. */
export interface PageMappingRecord {
  id: string;
  pagePattern: string;
  categoryId: string;
  categoryName: string;
  pluginId: string | null;
  pluginName: string | null;
  priority: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The fields written for a mapping. */
export interface PageMappingWrite {
  pagePattern: string;
  categoryId: string;
  pluginId: string | null;
  priority: number;
}

interface PageMappingRow {
  id: string;
  page_pattern: string;
  category_id: string;
  category_name: string;
  plugin_id: string | null;
  plugin_name: string | null;
  priority: number;
  created_at: unknown;
  updated_at: unknown;
}

const SELECT_MAPPINGS = `SELECT m.id, m.page_pattern, m.category_id, c.name AS category_name, m.plugin_id,
  p.name AS plugin_name, m.priority, m.created_at, m.updated_at
  FROM tool_page_mappings m
  JOIN tool_categories c ON c.id = m.category_id
  LEFT JOIN plugins p ON p.id = m.plugin_id`;

function toMappingRecord(row: PageMappingRow): PageMappingRecord {
  return {
    id: row.id,
    pagePattern: row.page_pattern,
    categoryId: row.category_id,
    categoryName: row.category_name,
    pluginId: row.plugin_id,
    pluginName: row.plugin_name,
    priority: row.priority,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** Filters for `listPageMappings`. */
export interface PageMappingListQuery {
  pluginId?: string | undefined;
  categoryId?: string | undefined;
}

/** Finds one mapping by id. */
export async function findPageMappingById(db: Queryable, id: string): Promise<PageMappingRecord | undefined> {
  const { rows } = await db.query<PageMappingRow>(`${SELECT_MAPPINGS} WHERE m.id = $1`, [id]);
  return rows[0] === undefined ? undefined : toMappingRecord(rows[0]);
}

/** Lists mappings, highest priority first (seed 001 §5.3 "ordered by priority"). */
export async function listPageMappings(db: Queryable, query: PageMappingListQuery = {}): Promise<PageMappingRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.pluginId !== undefined) {
    params.push(query.pluginId);
    where.push(`m.plugin_id = $${params.length}`);
  }
  if (query.categoryId !== undefined) {
    params.push(query.categoryId);
    where.push(`m.category_id = $${params.length}`);
  }
  const whereSql = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
  const { rows } = await db.query<PageMappingRow>(
    `${SELECT_MAPPINGS} ${whereSql} ORDER BY m.priority DESC, m.page_pattern, m.id`,
    params,
  );
  return rows.map(toMappingRecord);
}

/** Inserts one mapping and returns its id. */
export async function insertPageMapping(db: Queryable, mapping: PageMappingWrite, now: Date): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO tool_page_mappings (page_pattern, category_id, plugin_id, priority, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`,
    [mapping.pagePattern, mapping.categoryId, mapping.pluginId, mapping.priority, timeParam(now)],
  );
  return rows[0]!.id;
}

/** Rewrites a mapping's pattern, category and priority. Returns false when it does not exist. */
export async function updatePageMapping(db: Queryable, id: string, mapping: Omit<PageMappingWrite, 'pluginId'>, now: Date): Promise<boolean> {
  const result = await db.query(
    `UPDATE tool_page_mappings SET page_pattern = $2, category_id = $3, priority = $4, updated_at = $5 WHERE id = $1`,
    [id, mapping.pagePattern, mapping.categoryId, mapping.priority, timeParam(now)],
  );
  return result.affectedRows > 0;
}

/** Deletes a mapping. Returns false when it does not exist. */
export async function deletePageMapping(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM tool_page_mappings WHERE id = $1', [id]);
  return result.affectedRows > 0;
}

/** Upserts mappings by (page_pattern, category, plugin) in one statement (seed 001 §9.1 step 4). */
export async function upsertPageMappings(db: Queryable, mappings: readonly PageMappingWrite[], now: Date): Promise<void> {
  if (mappings.length === 0) return;
  const records = mappings.map((m) => ({
    page_pattern: m.pagePattern,
    category_id: m.categoryId,
    plugin_id: m.pluginId,
    priority: m.priority,
  }));
  await db.query(
    `INSERT INTO tool_page_mappings (page_pattern, category_id, plugin_id, priority, created_at, updated_at)
     SELECT x.page_pattern, x.category_id, x.plugin_id, x.priority, $2, $2
     FROM jsonb_to_recordset($1::jsonb) AS x(page_pattern text, category_id uuid, plugin_id uuid, priority integer)
     ON CONFLICT (page_pattern, category_id, (COALESCE(plugin_id, '${NIL_UUID}'::uuid))) DO UPDATE SET
       priority = EXCLUDED.priority, updated_at = EXCLUDED.updated_at`,
    [jsonParam(records), timeParam(now)],
  );
}
