/**
 * @module plugins/service/commit
 * The database half of an install: a prepared install (installer.ts) is committed either into
 * the row reserved for it (a new plugin) or over an existing row (update, sync, re-adding a
 * removed plugin). Tools enter through the catalog's `syncPlugin` (seed 001 §9); everything else
 * — status, lease, enablement, secrets, the shipped PID — in one transaction. A failure undoes
 * what this install did: the reserved row is deleted, or the old install fields are restored,
 * and a cache folder this install created is removed. The callers report the change once their
 * whole step is done (after an old process is stopped), as `installation`.
 */
import { rm } from 'node:fs/promises';
import { ErrorCodes, isQuiverError } from '../../core/errors.ts';
import type { CatalogService } from '../../catalog/service.ts';
import { setEnablement } from '../../store/repositories/enablement.ts';
import { finishPluginInstall } from '../../store/repositories/plugin-install-leases.ts';
import {
  deletePluginRecord,
  installFieldsOf,
  pluginsUsingCachePath,
  setPluginStatus,
  updatePluginInstall,
  type PluginRecord,
} from '../../store/repositories/plugins.ts';
import type { Queryable } from '../../store/database.ts';
import { replaceToolClientRequirements } from '../../store/repositories/tool-client-requirements.ts';
import { deleteFolder } from '../cache-folders.ts';
import { assessPid } from '../intelligence.ts';
import { installFailed, type PreparedInstall } from '../installer.ts';
import type { PinPlan } from '../../trust/pinning/index.ts';
import type { PluginContext } from './context.ts';
import { storeAssessedPid } from './intelligence.ts';
import { storeSecrets } from './secret-values.ts';
import type { InstallReport, PublicPlugin } from './types.ts';

/** What the catalog's sync reports. */
export type SyncResult = Awaited<ReturnType<CatalogService['syncPlugin']>>;

/** Where a new install is enabled. */
export interface ScopeIds {
  workspaceId: string;
  projectId: string | undefined;
}

/**
 * The declared categories, plus one plugin category for every category a tool names that the
 * plugin did not declare (the manifest's seed 002 `category`, e.g. "data"): the catalog only
 * accepts tools in categories it knows.
 */
function payloadCategories(prepared: PreparedInstall) {
  const categories = prepared.categories.map((category) => ({
    name: category.name,
    ...(category.displayName === undefined ? {} : { displayName: category.displayName }),
    ...(category.description === undefined ? {} : { description: category.description }),
    ...(category.parent === undefined ? {} : { parent: category.parent }),
  }));
  const known = new Set(categories.map((category) => category.name));
  for (const tool of prepared.tools) {
    if (tool.category !== undefined && !known.has(tool.category)) {
      known.add(tool.category);
      categories.push({ name: tool.category });
    }
  }
  return categories;
}

/**
 * Screens the served tools against their pins (issue #10, trust/pinning): a tool whose served
 * definition differs from its approved one keeps its approved catalog entry and is quarantined.
 * Undefined when pinning is not wired (tools are synced as served).
 */
async function screenTools(context: PluginContext, pluginId: string, prepared: PreparedInstall, firstDiscovery: boolean): Promise<PinPlan | undefined> {
  if (context.pinning === undefined) return undefined;
  return context.pinning.screen({ pluginId, definitions: prepared.served, entries: prepared.tools }, { pluginName: prepared.fields.name, firstDiscovery });
}

/** Syncs the prepared tools (as screened) into the catalog; a failure is `install_failed` at step `sync`. */
async function syncTools(context: PluginContext, name: string, prepared: PreparedInstall, pins: PinPlan | undefined): Promise<SyncResult> {
  try {
    return await context.catalog.syncPlugin({
      pluginId: name,
      version: prepared.fields.version ?? 'local',
      tools: pins?.entries ?? prepared.tools,
      categories: payloadCategories(prepared),
      pageMappings: prepared.pageMappings,
    });
  } catch (error) {
    throw installFailed(name, 'sync', (error as Error).message, { cause: error });
  }
}

/** Stores the PID shipped in quiver.json, as assessed against the registered tools. */
async function storeShippedPid(context: PluginContext, queryable: Queryable, pluginId: string, name: string, prepared: PreparedInstall): Promise<void> {
  if (prepared.shippedPid === undefined) return;
  const assessment = assessPid(prepared.shippedPid, { pluginName: name, registeredTools: prepared.registeredTools });
  await storeAssessedPid(context, queryable, { pluginId, version: prepared.fields.version ?? 'local', document: prepared.shippedPid, assessment, origin: 'shipped' });
}

/** Undoes the filesystem side of a failed commit, then rethrows as `install_failed` unless already a reported failure. */
async function failCommit(name: string, prepared: PreparedInstall, createdCache: boolean, error: unknown, passThrough: string[]): Promise<never> {
  if (createdCache && prepared.cachePath !== undefined) await rm(prepared.cachePath, { recursive: true, force: true });
  await prepared.discard();
  if (passThrough.some((code) => isQuiverError(error, code))) throw error;
  throw installFailed(name, 'sync', (error as Error).message, { cause: error });
}

/**
 * Commits a prepared install into the row reserved for it (status `failed`, leased). The
 * install fields (with the cache path) are written before the folder is placed, so a crash at
 * any point leaves a row that start-up recovery can roll back together with its folder.
 */
export async function commitReserved(
  context: PluginContext,
  id: string,
  prepared: PreparedInstall,
  scope: ScopeIds,
  values: Record<string, string>,
): Promise<SyncResult> {
  const { db, logger } = context;
  const name = prepared.fields.name;
  let createdCache = false;
  try {
    await updatePluginInstall(db, id, prepared.fields, 'failed', context.now());
    createdCache = await prepared.place();
    const pins = await screenTools(context, id, prepared, true);
    const sync = await syncTools(context, name, prepared, pins);
    await db.transaction(async (tx) => {
      if (pins !== undefined) await context.pinning!.apply(tx, pins);
      await setPluginStatus(tx, id, 'active', context.now());
      await finishPluginInstall(tx, id);
      await setEnablement(tx, { pluginId: id, workspaceId: scope.workspaceId, projectId: scope.projectId ?? null, enabled: true });
      await storeSecrets(context, tx, id, values);
      await storeShippedPid(context, tx, id, name, prepared);
      await replaceToolClientRequirements(tx, id, prepared.clientRequirements ?? {}, context.now());
    });
    if (pins !== undefined) context.pinning!.committed(pins);
    return sync;
  } catch (error) {
    // Compensation: the row (with its tools, versions, categories, enablement, secrets) and the folder go.
    await deletePluginRecord(db, id).catch((cleanup) => logger.error({ err: cleanup, plugin: name }, 'install cleanup failed'));
    return failCommit(name, prepared, createdCache, error, ['install_failed', ErrorCodes.conflict]);
  }
}

/** Commits a prepared install over an existing row (update, sync, or re-adding a removed plugin). */
export async function commitExisting(
  context: PluginContext,
  existing: PluginRecord,
  prepared: PreparedInstall,
  extra: { status: 'active' | 'disabled'; scope?: ScopeIds; values?: Record<string, string>; firstDiscovery?: boolean },
): Promise<SyncResult> {
  const { db, logger } = context;
  const name = existing.name;
  let createdCache = false;
  let rewritten = false;
  try {
    createdCache = await prepared.place();
    await updatePluginInstall(db, existing.id, prepared.fields, extra.status, context.now());
    rewritten = true;
    const pins = await screenTools(context, existing.id, prepared, extra.firstDiscovery ?? false);
    const sync = await syncTools(context, name, prepared, pins);
    await db.transaction(async (tx) => {
      if (pins !== undefined) await context.pinning!.apply(tx, pins);
      if (extra.scope !== undefined) {
        await setEnablement(tx, { pluginId: existing.id, workspaceId: extra.scope.workspaceId, projectId: extra.scope.projectId ?? null, enabled: true });
      }
      if (extra.values !== undefined) await storeSecrets(context, tx, existing.id, extra.values);
      await storeShippedPid(context, tx, existing.id, name, prepared);
      // Issue #24: which client capabilities each tool is listed for only, as this discovery found.
      await replaceToolClientRequirements(tx, existing.id, prepared.clientRequirements ?? {}, context.now());
    });
    if (pins !== undefined) context.pinning!.committed(pins);
    return sync;
  } catch (error) {
    if (rewritten) {
      await updatePluginInstall(db, existing.id, installFieldsOf(existing), existing.status, context.now()).catch((cleanup) =>
        logger.error({ err: cleanup, plugin: name }, 'restoring the plugin after a failed update failed'),
      );
    }
    return failCommit(name, prepared, createdCache, error, ['install_failed']);
  }
}

/** Removes a cache folder unless it is the user's own folder, outside the cache, or used by another live plugin. */
export async function releaseCache(context: PluginContext, path: unknown, inPlace: boolean, exceptId: string | null): Promise<void> {
  if (typeof path !== 'string' || inPlace || !path.startsWith(context.cacheDir)) return;
  if ((await pluginsUsingCachePath(context.db, path, exceptId)).length > 0) return;
  // Through the trash (issue #29): a crash mid-delete must not leave a half tree an install would reuse.
  await deleteFolder(context.cacheDir, path);
}

/** The report of an install: the plugin, what the sync did to each tool, and the warnings. */
export function reportOf(plugin: PublicPlugin, prepared: PreparedInstall, sync: SyncResult): InstallReport {
  return {
    plugin,
    tools: {
      inserted: sync.inserted,
      updated: sync.updated,
      deleted: sync.deleted,
      revived: sync.revived,
      unchanged: sync.unchanged,
      total: prepared.tools.length,
    },
    warnings: prepared.warnings,
  };
}
