/**
 * @module catalog/tool-writes
 * What every tool write shares (seed 001 §4.2 table 5, §6.10): finding the tool, resolving
 * its category by name, and recording a state as the next immutable version row, marking
 * the embedding stale when the content hash changed.
 */
import { notFound } from '../core/errors.ts';
import type { ToolRecord } from '../core/tool.ts';
import type { Queryable } from '../store/database.ts';
import { findCategoryById, resolveCategoryByName } from '../store/repositories/categories.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import { findToolById, updateTools, type ToolState } from '../store/repositories/tools.ts';
import { insertToolVersions } from '../store/repositories/versions.ts';
import { conflictOnDuplicate, type CatalogContext } from './context.ts';
import { hashToolState, snapshotOf } from './tool-state.ts';

/** A state change to write: the new state plus how it is recorded. */
export interface ToolChange {
  current: ToolRecord;
  next: ToolState;
  changedFields: string[];
  needsReview: boolean;
  changeReason: string | null;
  changedBy: string | null;
}

/** A tool by id (soft-deleted ones too); `not_found` for an unknown id or one that is not a UUID. */
export async function requireTool(db: Queryable, id: string): Promise<ToolRecord> {
  const tool = isUuid(id) ? await findToolById(db, id) : undefined;
  if (tool === undefined) throw notFound('tool', id);
  return tool;
}

/** The id of the category a tool names (a plugin's own first, then global); `not_found` when none. */
export async function resolveCategory(db: Queryable, name: string | undefined | null, pluginId: string | null): Promise<string | null> {
  if (name === undefined || name === null) return null;
  const category = await resolveCategoryByName(db, name, pluginId);
  if (category === undefined) throw notFound('category', name);
  return category.id;
}

/** Appends the version row of `state` (its snapshot carries the category's name, which survives the category). */
export async function recordVersion(
  tx: Queryable,
  entry: { toolId: string; version: number; state: ToolState; contentHash: string; changedFields: string[]; changeReason: string | null; changedBy: string | null },
  now: Date,
): Promise<void> {
  const categoryName = entry.state.categoryId === null ? null : ((await findCategoryById(tx, entry.state.categoryId))?.name ?? null);
  await insertToolVersions(tx, [{
    toolId: entry.toolId,
    version: entry.version,
    snapshot: snapshotOf(entry.state, entry.contentHash, categoryName),
    changedFields: entry.changedFields,
    changeReason: entry.changeReason,
    contentHash: entry.contentHash,
    schemaVersion: entry.state.schemaVersion,
    createdBy: entry.changedBy,
  }], now);
}

/** Writes a change as the next version; returns the stored record. */
export async function writeChange(context: CatalogContext, tx: Queryable, change: ToolChange): Promise<ToolRecord> {
  const { current, next } = change;
  const contentHash = hashToolState(next);
  const version = current.version + 1;
  const now = context.now();
  await conflictOnDuplicate(
    () => updateTools(tx, [{ ...next, id: current.id, version, needsReview: change.needsReview, contentHash, markStale: contentHash !== current.contentHash }], now),
    `a tool named '${next.name}' already exists in ${current.pluginName === null ? 'the global catalog' : `plugin '${current.pluginName}'`}`,
  );
  await recordVersion(tx, {
    toolId: current.id, version, state: next, contentHash,
    changedFields: change.changedFields, changeReason: change.changeReason, changedBy: change.changedBy,
  }, now);
  return (await findToolById(tx, current.id))!;
}
