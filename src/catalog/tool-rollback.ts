/**
 * @module catalog/tool-rollback
 * Rollback (seed 001 §8.1): a stored version's snapshot becomes the next version, reviving a
 * deleted tool. A category deleted since falls back to one of the same name, else none.
 */
import { QuiverError, notFound } from '../core/errors.ts';
import type { ToolRecord } from '../core/tool.ts';
import { parseOrThrow } from '../core/validation.ts';
import { findCategoryById, resolveCategoryByName } from '../store/repositories/categories.ts';
import { findToolVersion } from '../store/repositories/versions.ts';
import type { CatalogContext } from './context.ts';
import { rollbackInputSchema, type RollbackInput } from './schemas.ts';
import { changedToolFields, toolSnapshotSchema, toolStateOf } from './tool-state.ts';
import { requireTool, writeChange } from './tool-writes.ts';

/** Restores a version's snapshot as a new version; restoring the current state writes nothing. */
export async function rollbackTool(context: CatalogContext, id: string, raw: RollbackInput): Promise<ToolRecord> {
  const input = parseOrThrow(rollbackInputSchema, raw, 'rollback');
  const result = await context.db.transaction(async (tx) => {
    const current = await requireTool(tx, id);
    const target = await findToolVersion(tx, current.id, input.version);
    if (target === undefined) throw notFound('tool version', `${id}@${input.version}`);
    const snapshot = toolSnapshotSchema.safeParse(target.snapshot);
    if (!snapshot.success) {
      throw new QuiverError('internal', `version ${input.version} of tool '${current.qualifiedName}' has an unreadable snapshot`, { cause: snapshot.error });
    }
    const next = toolStateOf(snapshot.data);
    if (next.categoryId !== null && (await findCategoryById(tx, next.categoryId)) === undefined) {
      const byName = snapshot.data.categoryName === null ? undefined : await resolveCategoryByName(tx, snapshot.data.categoryName, current.pluginId);
      next.categoryId = byName?.id ?? null;
    }
    const revive = current.deletedAt !== null;
    const changedFields: string[] = changedToolFields(toolStateOf(current), next);
    if (revive) changedFields.push('deletedAt');
    if (changedFields.length === 0) return { tool: current, changed: false };
    const reason = `rollback to version ${input.version}${input.changeReason === undefined ? '' : `: ${input.changeReason}`}`;
    const tool = await writeChange(context, tx, {
      current, next, changedFields, needsReview: current.needsReview,
      changeReason: reason, changedBy: input.changedBy ?? null,
    });
    return { tool, changed: true };
  });
  if (result.changed) context.emit({ kind: 'tools', ids: [result.tool.id] });
  return result.tool;
}
