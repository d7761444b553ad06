/**
 * @module catalog/tool-update
 * Changing a live tool (seed 001 §8.1): a partial patch recorded as the next version (a
 * patch that changes nothing writes nothing), and soft deletion, recorded as a version too.
 */
import { QuiverError, invalidInput, notFound } from '../core/errors.ts';
import type { ToolRecord } from '../core/tool.ts';
import { parseOrThrow } from '../core/validation.ts';
import { findToolById, softDeleteTools, type ToolState } from '../store/repositories/tools.ts';
import type { CatalogContext } from './context.ts';
import { deleteToolInputSchema, toolPatchSchema, type DeleteToolInput, type ToolPatch } from './schemas.ts';
import { changedToolFields, toolStateOf } from './tool-state.ts';
import { requireTool, resolveCategory, writeChange } from './tool-writes.ts';

/** Applies a partial patch as a new version; a no-op patch writes nothing; a deleted tool is a `conflict`. */
export async function updateTool(context: CatalogContext, id: string, raw: ToolPatch): Promise<ToolRecord> {
  const patch = parseOrThrow(toolPatchSchema, raw, 'tool patch');
  const { changeReason, changedBy, needsReview, category, ...fields } = patch;
  if (Object.keys(fields).length === 0 && category === undefined && needsReview === undefined) {
    throw invalidInput('a tool patch must change at least one field');
  }
  const result = await context.db.transaction(async (tx) => {
    const current = await requireTool(tx, id);
    if (current.deletedAt !== null) {
      throw new QuiverError('conflict', `tool '${current.qualifiedName}' is deleted; roll it back to a version to restore it`, { details: { id } });
    }
    const before = toolStateOf(current);
    const next: ToolState = { ...before };
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined) (next as unknown as Record<string, unknown>)[key] = value;
    }
    if (category !== undefined) next.categoryId = await resolveCategory(tx, category, current.pluginId);
    const changedFields: string[] = changedToolFields(before, next);
    const review = needsReview ?? current.needsReview;
    if (review !== current.needsReview) changedFields.push('needsReview');
    if (changedFields.length === 0) return { tool: current, changed: false };
    const tool = await writeChange(context, tx, {
      current, next, changedFields, needsReview: review,
      changeReason: changeReason ?? null, changedBy: changedBy ?? null,
    });
    return { tool, changed: true };
  });
  if (result.changed) context.emit({ kind: 'tools', ids: [result.tool.id] });
  return result.tool;
}

/** Soft-deletes a live tool (recorded as a version); an already deleted one is `not_found`. */
export async function deleteTool(context: CatalogContext, id: string, raw: DeleteToolInput = {}): Promise<ToolRecord> {
  const input = parseOrThrow(deleteToolInputSchema, raw, 'tool deletion');
  const tool = await context.db.transaction(async (tx) => {
    const current = await requireTool(tx, id);
    if (current.deletedAt !== null) throw notFound('tool', id);
    await softDeleteTools(tx, [current.id], context.now(), {
      changeReason: input.changeReason ?? 'deleted',
      createdBy: input.changedBy ?? null,
    });
    return (await findToolById(tx, current.id))!;
  });
  context.emit({ kind: 'tools', ids: [tool.id] });
  return tool;
}
