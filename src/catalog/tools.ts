/**
 * @module catalog/tools
 * Tool registry operations (seed 001 §8.1): create, read, list, patch, soft delete, history and
 * rollback. Every write is one transaction that also appends an immutable version row
 * (seed 001 §4.2 table 5); a content-hash change marks the embedding stale (§6.10).
 */
import { randomUUID } from 'node:crypto';
import { QuiverError, invalidInput, notFound } from '../core/errors.ts';
import { parseQualifiedName, isValidToolName } from '../core/names.ts';
import type { ToolRecord } from '../core/tool.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import { findCategoryById, resolveCategoryByName } from '../store/repositories/categories.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import { findPluginByName } from '../store/repositories/plugin-refs.ts';
import {
  findToolById, findToolByName, insertTools, listTools, softDeleteTools, updateTools, type ToolState,
} from '../store/repositories/tools.ts';
import {
  findToolVersion, insertToolVersions, listToolVersions, type ToolVersionRecord,
} from '../store/repositories/versions.ts';
import { conflictOnDuplicate, type CatalogContext } from './context.ts';
import {
  createToolInputSchema, deleteToolInputSchema, rollbackInputSchema, toolListQuerySchema, toolPatchSchema,
  type CreateToolInput, type DeleteToolInput, type RollbackInput, type ToolListQueryInput, type ToolPatch,
} from './schemas.ts';
import {
  changedToolFields, hashToolState, snapshotOf, toolSnapshotSchema, toolStateFromInput, toolStateOf,
} from './tool-state.ts';

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

/** The tool operations of the catalog service. */
export interface ToolOperations {
  /** Registers a tool and writes its version 1; re-creating a soft-deleted tool revives it. */
  createTool(input: CreateToolInput): Promise<ToolRecord>;
  /** A tool by id (soft-deleted ones too, with `deletedAt` set). */
  getTool(id: string): Promise<ToolRecord>;
  /** A live tool by `<plugin>__<tool>` or, for plugin-less tools, its bare name. */
  getToolByQualifiedName(qualifiedName: string, options?: ToolLookupOptions): Promise<ToolRecord>;
  /** Tools matching filters, one page at a time. */
  listTools(query?: ToolListQueryInput, options?: { onlyIds?: ReadonlySet<string> }): Promise<ToolPage>;
  /** Applies a partial patch as a new version; a no-op patch writes nothing. */
  updateTool(id: string, patch: ToolPatch): Promise<ToolRecord>;
  /** Soft-deletes a tool (recorded as a version). */
  deleteTool(id: string, input?: DeleteToolInput): Promise<ToolRecord>;
  /** Every version of a tool, newest first. */
  listToolVersions(id: string): Promise<ToolVersionRecord[]>;
  /** Restores a version's snapshot as a new version (reviving a deleted tool). */
  rollbackTool(id: string, input: RollbackInput): Promise<ToolRecord>;
}

/** A state change to write: the new state plus how it is recorded. */
interface ToolChange {
  current: ToolRecord;
  next: ToolState;
  changedFields: string[];
  needsReview: boolean;
  changeReason: string | null;
  changedBy: string | null;
}

async function requireTool(db: Queryable, id: string): Promise<ToolRecord> {
  const tool = isUuid(id) ? await findToolById(db, id) : undefined;
  if (tool === undefined) throw notFound('tool', id);
  return tool;
}

async function categoryNameOf(db: Queryable, categoryId: string | null): Promise<string | null> {
  if (categoryId === null) return null;
  return (await findCategoryById(db, categoryId))?.name ?? null;
}

async function resolveCategory(db: Queryable, name: string | undefined | null, pluginId: string | null): Promise<string | null> {
  if (name === undefined || name === null) return null;
  const category = await resolveCategoryByName(db, name, pluginId);
  if (category === undefined) throw notFound('category', name);
  return category.id;
}

/** Writes a change as the next version; returns the stored record. */
async function writeChange(context: CatalogContext, tx: Queryable, change: ToolChange): Promise<ToolRecord> {
  const { current, next } = change;
  const contentHash = hashToolState(next);
  const version = current.version + 1;
  const now = context.now();
  await conflictOnDuplicate(
    () => updateTools(tx, [{ ...next, id: current.id, version, needsReview: change.needsReview, contentHash, markStale: contentHash !== current.contentHash }], now),
    `a tool named '${next.name}' already exists in ${current.pluginName === null ? 'the global catalog' : `plugin '${current.pluginName}'`}`,
  );
  await insertToolVersions(tx, [{
    toolId: current.id,
    version,
    snapshot: snapshotOf(next, contentHash, await categoryNameOf(tx, next.categoryId)),
    changedFields: change.changedFields,
    changeReason: change.changeReason,
    contentHash,
    schemaVersion: next.schemaVersion,
    createdBy: change.changedBy,
  }], now);
  return (await findToolById(tx, current.id))!;
}

/** Builds the tool operations over the shared context. */
export function createToolOperations(context: CatalogContext): ToolOperations {
  const { db } = context;

  return {
    async createTool(raw) {
      const input = parseOrThrow(createToolInputSchema, raw, 'tool');
      const tool = await db.transaction(async (tx) => {
        let pluginId: string | null = null;
        if (input.pluginName !== undefined) {
          const plugin = await findPluginByName(tx, input.pluginName);
          if (plugin === undefined) throw notFound('plugin', input.pluginName);
          pluginId = plugin.id;
        }
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
        await insertToolVersions(tx, [{
          toolId: id,
          version: 1,
          snapshot: snapshotOf(state, contentHash, await categoryNameOf(tx, state.categoryId)),
          changedFields: [],
          changeReason: input.changeReason ?? 'created',
          contentHash,
          schemaVersion: state.schemaVersion,
          createdBy: input.changedBy ?? null,
        }], now);
        return (await findToolById(tx, id))!;
      });
      context.emit({ kind: 'tools', ids: [tool.id] });
      return tool;
    },

    async getTool(id) {
      return requireTool(db, id);
    },

    async getToolByQualifiedName(qualifiedName, options = {}) {
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
    },

    async listTools(raw = {}, options = {}) {
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
    },

    async updateTool(id, raw) {
      const patch = parseOrThrow(toolPatchSchema, raw, 'tool patch');
      const { changeReason, changedBy, needsReview, category, ...fields } = patch;
      if (Object.keys(fields).length === 0 && category === undefined && needsReview === undefined) {
        throw invalidInput('a tool patch must change at least one field');
      }
      const result = await db.transaction(async (tx) => {
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
    },

    async deleteTool(id, raw = {}) {
      const input = parseOrThrow(deleteToolInputSchema, raw, 'tool deletion');
      const tool = await db.transaction(async (tx) => {
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
    },

    async listToolVersions(id) {
      const tool = await requireTool(db, id);
      return listToolVersions(db, tool.id);
    },

    async rollbackTool(id, raw) {
      const input = parseOrThrow(rollbackInputSchema, raw, 'rollback');
      const result = await db.transaction(async (tx) => {
        const current = await requireTool(tx, id);
        const target = await findToolVersion(tx, current.id, input.version);
        if (target === undefined) throw notFound('tool version', `${id}@${input.version}`);
        const snapshot = toolSnapshotSchema.safeParse(target.snapshot);
        if (!snapshot.success) {
          throw new QuiverError('internal', `version ${input.version} of tool '${current.qualifiedName}' has an unreadable snapshot`, { cause: snapshot.error });
        }
        const next = toolStateOf(snapshot.data);
        // The category may have been deleted since; fall back to one of the same name, else none.
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
    },
  };
}
