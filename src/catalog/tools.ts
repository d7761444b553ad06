/**
 * @module catalog/tools
 * Tool registry operations (seed 001 §8.1): create, read, list, patch, soft delete, history and
 * rollback. Every write is one transaction that also appends an immutable version row
 * (seed 001 §4.2 table 5); a content-hash change marks the embedding stale (§6.10).
 *
 * This file assembles the parts: `tool-create`, `tool-update` (patch, delete), `tool-rollback`,
 * `tool-reads`, and `tool-writes` (what the writes share: the version row).
 */
import type { ToolRecord } from '../core/tool.ts';
import { listToolVersions, type ToolVersionRecord } from '../store/repositories/versions.ts';
import type { CatalogContext } from './context.ts';
import type { CreateToolInput, DeleteToolInput, RollbackInput, ToolListQueryInput, ToolPatch } from './schemas.ts';
import { createTool } from './tool-create.ts';
import { getToolByQualifiedName, listToolPage, type ToolLookupOptions, type ToolPage } from './tool-reads.ts';
import { rollbackTool } from './tool-rollback.ts';
import { deleteTool, updateTool } from './tool-update.ts';
import { requireTool } from './tool-writes.ts';

export type { ToolLookupOptions, ToolPage } from './tool-reads.ts';

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

/** Builds the tool operations over the shared context. */
export function createToolOperations(context: CatalogContext): ToolOperations {
  const { db } = context;
  return {
    createTool: (input) => createTool(context, input),
    getTool: (id) => requireTool(db, id),
    getToolByQualifiedName: (qualifiedName, options) => getToolByQualifiedName(db, qualifiedName, options),
    listTools: (query, options) => listToolPage(db, query, options),
    updateTool: (id, patch) => updateTool(context, id, patch),
    deleteTool: (id, input) => deleteTool(context, id, input),
    async listToolVersions(id) {
      const tool = await requireTool(db, id);
      return listToolVersions(db, tool.id);
    },
    rollbackTool: (id, input) => rollbackTool(context, id, input),
  };
}
