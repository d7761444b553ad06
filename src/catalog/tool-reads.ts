/**
 * @module catalog/tool-reads
 * Reading tools (seed 001 §8.1): by qualified name (`<plugin>__<tool>`, or the bare name of a
 * plugin-less tool) and as filtered pages.
 */
import { notFound } from '../core/errors.ts';
import { isValidToolName, parseQualifiedName } from '../core/names.ts';
import type { ToolRecord } from '../core/tool.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import { findPluginByName } from '../store/repositories/plugin-refs.ts';
import { findToolByName, listTools } from '../store/repositories/tools.ts';
import { toolListQuerySchema, type ToolListQueryInput } from './schemas.ts';

/** One page of tools. */
export interface ToolPage {
  items: ToolRecord[];
  total: number;
  limit: number;
  offset: number;
}

/** Options of `getToolByQualifiedName`. */
export interface ToolLookupOptions {
  includeDeleted?: boolean;
}

/** A live tool (or a deleted one when asked) by qualified name; `not_found` otherwise. */
export async function getToolByQualifiedName(db: Queryable, qualifiedName: string, options: ToolLookupOptions = {}): Promise<ToolRecord> {
  const parsed = parseQualifiedName(qualifiedName);
  let tool: ToolRecord | undefined;
  if (parsed !== undefined) {
    const plugin = await findPluginByName(db, parsed.plugin);
    tool = plugin === undefined ? undefined : await findToolByName(db, plugin.id, parsed.tool);
  } else if (isValidToolName(qualifiedName)) {
    tool = await findToolByName(db, null, qualifiedName);
  }
  if (tool === undefined || (tool.deletedAt !== null && !options.includeDeleted)) throw notFound('tool', qualifiedName);
  return tool;
}

/** Tools matching the query's filters (and `onlyIds`, when given), one page. */
export async function listToolPage(db: Queryable, raw: ToolListQueryInput = {}, options: { onlyIds?: ReadonlySet<string> } = {}): Promise<ToolPage> {
  const query = parseOrThrow(toolListQuerySchema, raw, 'tool list query');
  const { items, total } = await listTools(db, {
    pluginId: query.pluginId,
    pluginName: query.pluginName,
    categoryId: query.categoryId,
    categoryName: query.category,
    status: query.status,
    embeddingStatus: query.embeddingStatus,
    orgId: query.orgId,
    search: query.search,
    ids: options.onlyIds,
    includeDeleted: query.includeDeleted,
    limit: query.limit,
    offset: query.offset,
  });
  return { items, total, limit: query.limit, offset: query.offset };
}
