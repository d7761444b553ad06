/**
 * @module rollouts/views
 * What status shows: a plugin's two slots (version, status, traffic, health score), its open or
 * latest rollout with the current step's health, and its history, newest first.
 */
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import { findPluginRecordById, findPluginRecordByName } from '../store/repositories/plugins.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import { requireInstalledPlugin, type RolloutContext } from './context.ts';
import { stepHealth } from './decider.ts';
import { deploymentsOf, latestRolloutOf, rolloutEventsOf } from './repository.ts';
import type { RolloutView } from './types.ts';
import { folderSizes } from './disk-use.ts';
import { cacheFolderOf } from './folder-usage.ts';

/** History lines a view carries. */
const HISTORY_LIMIT = 50;

/** A plugin's slots, rollout and history. */
export async function rolloutView(context: RolloutContext, plugin: string): Promise<RolloutView> {
  const record = await requireInstalledPlugin(context, plugin);
  // The rollout first: a move commits it with its slots and history, so slots and history read
  // after it are at least as new (parallel reads on a pool could show a rolled-back rollout
  // beside a slot still marked canary).
  const rollout = await latestRolloutOf(context.db, record.id);
  const [slots, history] = await Promise.all([deploymentsOf(context.db, record.id), rolloutEventsOf(context.db, record.id, HISTORY_LIMIT)]);
  const open = rollout !== undefined && (rollout.status === 'running' || rollout.status === 'paused');
  if (open) await context.flushCallEvents();
  const health = open ? await stepHealth(context, rollout) : undefined;
  const canary = slots.find((slot) => slot.id === rollout?.toDeployment);
  return {
    plugin: record.name,
    pluginId: record.id,
    rollout: rollout ?? null,
    trafficPercent: open ? (canary?.trafficPercent ?? 0) : 0,
    // The install snapshot is large and internal: views show the slot, not its staged files.
    slots: slots.map((slot) => ({ ...slot, install: null })),
    health: health === undefined ? null : { canary: health.canary, stable: health.stable },
    history,
  };
}

/** Every plugin that has deployments, open rollouts first. */
export async function rolloutViews(context: RolloutContext): Promise<RolloutView[]> {
  const { rows } = await context.db.query<{ plugin_id: string }>('SELECT DISTINCT plugin_id FROM deployments');
  const views: RolloutView[] = [];
  for (const row of rows) {
    const record = await findPluginRecordById(context.db, row.plugin_id);
    if (record === undefined || record.status === 'removed') continue;
    try {
      views.push(await rolloutView(context, record.id));
    } catch (error) {
      if (!(error instanceof QuiverError && error.code === ErrorCodes.notFound)) throw error;
    }
  }
  const rank = (view: RolloutView) => (view.rollout?.status === 'running' || view.rollout?.status === 'paused' ? 0 : 1);
  return views.sort((a, b) => rank(a) - rank(b) || a.plugin.localeCompare(b.plugin));
}

/** A plugin's install folders on disk and what uses each (issue #29, `quiver plugin show`). */
export interface DiskUse {
  /** Bytes of every folder below, each inode counted once (as `du -sb` counts them together). */
  bytes: number;
  folders: Array<{ path: string; bytes: number; exists: boolean; uses: string[] }>;
}

/** The folders of a plugin: the installed version's and each slot's. */
export async function diskUse(context: RolloutContext, plugin: string): Promise<DiskUse> {
  // Any status: a failed or removed plugin's folders are worth seeing too.
  const record = (await findPluginRecordByName(context.db, plugin)) ?? (isUuid(plugin) ? await findPluginRecordById(context.db, plugin) : undefined);
  if (record === undefined) throw notFound('plugin', plugin);
  const uses = new Map<string, string[]>();
  const add = (folder: string | null, use: string) => {
    if (folder !== null) uses.set(folder, [...(uses.get(folder) ?? []), use]);
  };
  add(cacheFolderOf(record.source), `installed (${record.version ?? 'local'})`);
  for (const slot of await deploymentsOf(context.db, record.id)) add(slot.folder, `${slot.slot} slot (${slot.version}, ${slot.status})`);
  const sizes = await folderSizes([...uses.keys()]);
  return { bytes: sizes.bytes, folders: sizes.folders.map((folder) => ({ ...folder, uses: uses.get(folder.path) ?? [] })) };
}
