/**
 * @module catalog/tool-create
 * Registering a tool (seed 001 §8.1): version 1 with a pending embedding, or, when a
 * soft-deleted tool of that name exists, its revival as the next version.
 */
import { randomUUID } from 'node:crypto';
import { QuiverError, notFound } from '../core/errors.ts';
import type { ToolRecord } from '../core/tool.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import { findPluginByName } from '../store/repositories/plugin-refs.ts';
import { findToolById, findToolByName, insertTools } from '../store/repositories/tools.ts';
import { conflictOnDuplicate, type CatalogContext } from './context.ts';
import { createToolInputSchema, type CreateToolInput } from './schemas.ts';
import { changedToolFields, hashToolState, toolStateFromInput, toolStateOf } from './tool-state.ts';
import { recordVersion, resolveCategory, writeChange } from './tool-writes.ts';

/** The id of the named plugin, or null for a global tool; `not_found` for an unknown plugin. */
async function pluginIdFor(tx: Queryable, pluginName: string | undefined): Promise<string | null> {
  if (pluginName === undefined) return null;
  const plugin = await findPluginByName(tx, pluginName);
  if (plugin === undefined) throw notFound('plugin', pluginName);
  return plugin.id;
}

/** Registers a tool and writes its version 1; re-creating a soft-deleted tool revives it. */
export async function createTool(context: CatalogContext, raw: CreateToolInput): Promise<ToolRecord> {
  const input = parseOrThrow(createToolInputSchema, raw, 'tool');
  const tool = await context.db.transaction(async (tx) => {
    const pluginId = await pluginIdFor(tx, input.pluginName);
    const state = toolStateFromInput(input, await resolveCategory(tx, input.category, pluginId));
    const existing = await findToolByName(tx, pluginId, input.name);
    if (existing !== undefined && existing.deletedAt === null) {
      throw new QuiverError('conflict', `tool '${existing.qualifiedName}' already exists`, { details: { id: existing.id } });
    }
    if (existing !== undefined) {
      return writeChange(context, tx, {
        current: existing,
        next: state,
        changedFields: [...changedToolFields(toolStateOf(existing), state), 'deletedAt'],
        needsReview: existing.needsReview,
        changeReason: input.changeReason ?? 'recreated',
        changedBy: input.changedBy ?? null,
      });
    }
    const id = randomUUID();
    const contentHash = hashToolState(state);
    const now = context.now();
    await conflictOnDuplicate(
      () => insertTools(tx, [{ ...state, id, pluginId, contentHash, embeddingStatus: 'pending' }], now),
      `tool '${input.name}' already exists`,
    );
    await recordVersion(tx, {
      toolId: id, version: 1, state, contentHash, changedFields: [],
      changeReason: input.changeReason ?? 'created', changedBy: input.changedBy ?? null,
    }, now);
    return (await findToolById(tx, id))!;
  });
  context.emit({ kind: 'tools', ids: [tool.id] });
  return tool;
}
