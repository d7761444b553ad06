/**
 * @module catalog/sync
 * Plugin self-registration (seed 001 §9, `POST /internal/tool-registry/plugins/sync`). One
 * transaction: the plugin row (created with `source_type = 'sync'` when absent) is upserted
 * first, which row-locks it so two syncs of one plugin run in turn; the stored categories,
 * tools and mappings are read once each (§9.2: hashes compared in memory, not per query),
 * the large content columns only for tools whose hash changed; `planSync`
 * decides; the writes go out as a handful of batched statements. Any problem rolls back
 * everything, so a bad payload changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { invalidInput } from '../core/errors.ts';
import { parseOrThrow } from '../core/validation.ts';
import { listCategories, upsertCategories } from '../store/repositories/categories.ts';
import { listPageMappings, upsertPageMappings } from '../store/repositories/page-mappings.ts';
import { upsertSyncPlugin } from '../store/repositories/plugin-refs.ts';
import { enableInDefaultWorkspace } from '../store/repositories/enablement.ts';
import {
  insertTools, selectPluginToolSummaries, selectToolStates, softDeleteTools, updateTools,
} from '../store/repositories/tools.ts';
import { insertToolVersions } from '../store/repositories/versions.ts';
import type { CatalogChangeEvent, CatalogContext } from './context.ts';
import { syncPayloadSchema, type SyncPayload } from './sync-schema.ts';
import { contentChangedIds, payloadContentHashes, planSync } from './sync-plan.ts';

/** What one sync did. Tool lists hold tool names (not qualified). */
export interface SyncReport {
  pluginId: string;
  pluginName: string;
  pluginCreated: boolean;
  version: string;
  inserted: string[];
  updated: string[];
  unchanged: number;
  deleted: string[];
  revived: string[];
  /** Tools whose content hash changed: re-embedded by the next embedding run (seed 001 §9.1 step 5). */
  markedStale: string[];
  /** Tools newly flagged by a major schemaVersion bump (seed 001 §9.3). */
  needsReview: string[];
  /** Categories created or changed. */
  categoriesWritten: string[];
  /** Mappings created or re-prioritised. */
  mappingsWritten: number;
  durationMs: number;
}

/** The sync operation of the catalog service. */
export interface SyncOperations {
  /** Applies a plugin's self-registration payload differentially, all or nothing. */
  syncPlugin(payload: SyncPayload): Promise<SyncReport>;
}

/** Builds the sync operation over the shared context. */
export function createSyncOperations(context: CatalogContext): SyncOperations {
  return {
    async syncPlugin(raw) {
      const started = performance.now();
      const payload = parseOrThrow(syncPayloadSchema, raw, 'plugin sync payload');
      const contentHashes = payloadContentHashes(payload);
      const now = context.now();
      const { report, toolIds, writtenIds } = await context.db.transaction(async (tx) => {
        const plugin = await upsertSyncPlugin(tx, payload.pluginId, payload.version, now);
        // A plugin that registers itself is usable at once, like one added with `quiver plugin add`.
        if (plugin.created) await enableInDefaultWorkspace(tx, plugin.id);
        const storedTools = await selectPluginToolSummaries(tx, plugin.id);
        const changedIds = contentChangedIds(payload, contentHashes, storedTools);
        const storedContent = new Map((await selectToolStates(tx, changedIds)).map((tool) => [tool.id, tool]));
        const plan = planSync({
          pluginId: plugin.id,
          payload,
          storedCategories: await listCategories(tx, { pluginId: plugin.id }),
          storedTools,
          contentHashes,
          storedContent,
          storedMappings: await listPageMappings(tx, { pluginId: plugin.id }),
          newId: randomUUID,
          changeReason: `plugin sync ${payload.version}`,
          createdBy: `plugin:${payload.pluginId}`,
        });
        if (plan.problems.length > 0) {
          const summary = plan.problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ');
          throw invalidInput(`invalid plugin sync payload: ${summary}`, { issues: plan.problems });
        }
        await upsertCategories(tx, plan.categoryWrites, now);
        await insertTools(tx, plan.toolInserts, now);
        await updateTools(tx, plan.toolUpdates, now);
        await insertToolVersions(tx, plan.versions, now);
        await softDeleteTools(tx, plan.deleteIds, now, { changeReason: `missing from plugin sync ${payload.version}`, createdBy: `plugin:${payload.pluginId}` });
        await upsertPageMappings(tx, plan.mappingWrites, now);
        const report: SyncReport = {
          pluginId: plugin.id,
          pluginName: payload.pluginId,
          pluginCreated: plugin.created,
          version: payload.version,
          inserted: plan.inserted,
          updated: plan.updated,
          unchanged: plan.unchanged,
          deleted: plan.deleted,
          revived: plan.revived,
          markedStale: plan.markedStale,
          needsReview: plan.needsReview,
          categoriesWritten: plan.categoryWrites.map((c) => c.name),
          mappingsWritten: plan.mappingWrites.length,
          durationMs: 0,
        };
        const toolIds = [...plan.toolInserts.map((t) => t.id), ...plan.toolUpdates.map((t) => t.id), ...plan.deleteIds];
        return { report, toolIds, writtenIds: [...plan.toolInserts.map((t) => t.id), ...plan.toolUpdates.map((t) => t.id)] };
      });
      if (writtenIds.length > 0 && context.afterSync !== undefined) {
        try {
          await context.afterSync(context.db, writtenIds);
        } catch (error) {
          context.logger?.warn({ err: error, tools: writtenIds.length }, 'catalog: the after-sync step failed (token counts are made by the next selection)');
        }
      }
      report.durationMs = performance.now() - started;
      const events: CatalogChangeEvent[] = [];
      if (toolIds.length > 0) events.push({ kind: 'tools', ids: toolIds });
      if (report.categoriesWritten.length > 0) events.push({ kind: 'categories' });
      if (report.mappingsWritten > 0) events.push({ kind: 'mappings' });
      context.emit(...events);
      return report;
    },
  };
}
