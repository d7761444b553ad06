/**
 * @module rollouts/reconcile
 * Keeps the slot rows true to the plugin rows when something other than a rollout changed the
 * plugin (issue #29): a removed plugin's slots, rollouts and history are deleted (its folders are
 * then unused and the sweep deletes them); a plugin moved by `quiver plugin update` gets its
 * active slot rewritten to what is installed now, the replaced folder recorded as released in
 * the history, and an open rollout whose stable side is no longer installed is rolled back.
 * Runs at the start of an upgrade, on every sweep and when the plugins service reports a change.
 */
import { findPluginRecordById, type PluginRecord } from '../store/repositories/plugins.ts';
import type { RolloutContext } from './context.ts';
import { cacheFolderOf } from './folder-usage.ts';
import { deleteDeploymentsOf, deploymentsOf, insertRolloutEvent, latestRolloutOf, openRolloutOf, upsertDeployment } from './repository.ts';
import { rollBack } from './transitions.ts';
import type { Deployment } from './types.ts';

/** The version label and folder the plugin row says are installed. */
function installedOf(record: PluginRecord): { version: string; folder: string | null } {
  return { version: record.version ?? 'local', folder: cacheFolderOf(record.source) };
}

const matches = (slot: Deployment, installed: { version: string; folder: string | null }) => slot.version === installed.version && slot.folder === installed.folder;

/** Brings one plugin's slots in line with its row; returns what it changed (empty: nothing). */
export async function reconcilePlugin(context: RolloutContext, pluginId: string): Promise<string[]> {
  const record = await findPluginRecordById(context.db, pluginId);
  let slots = await deploymentsOf(context.db, pluginId);
  if (slots.length === 0) return [];
  if (record === undefined || record.status === 'removed' || record.status === 'failed') {
    await deleteDeploymentsOf(context.db, pluginId);
    await context.changed();
    return [`plugin ${record?.name ?? pluginId} is not installed: its ${slots.length} slot(s), rollouts and history were deleted`];
  }
  const installed = installedOf(record);
  const changes: string[] = [];
  const open = await openRolloutOf(context.db, pluginId);
  const stable = slots.find((slot) => slot.id === open?.fromDeployment);
  if (open !== undefined && stable !== undefined && !matches(stable, installed)) {
    await rollBack(context, open, record.name, 'automatic', `the plugin was changed outside the rollout (now ${installed.version}); the rollout cannot continue`);
    changes.push(`rolled back the open rollout: ${record.name} was changed outside it`);
    slots = await deploymentsOf(context.db, pluginId);
  }
  const active = slots.find((slot) => slot.status === 'active');
  if (active === undefined || matches(active, installed)) return changes;
  const at = context.now();
  const latest = await latestRolloutOf(context.db, pluginId);
  await context.db.transaction(async (tx) => {
    await upsertDeployment(
      tx,
      {
        pluginId,
        slot: active.slot,
        version: installed.version,
        status: 'active',
        trafficPercent: 100,
        runtimeVersion: installed.version,
        executionMode: record.trustLevel ?? null,
        requestedRef: typeof record.source['commit'] === 'string' ? record.source['commit'] : typeof record.source['ref'] === 'string' ? record.source['ref'] : null,
        install: null,
        routableTools: [],
        folder: installed.folder,
      },
      at,
    );
    if (latest !== undefined) {
      await insertRolloutEvent(
        tx,
        {
          rolloutId: latest.id,
          pluginId,
          kind: 'folder',
          message: `${record.name} was updated outside a rollout (${active.version} → ${installed.version}); the ${active.slot} slot now holds what is installed${active.folder !== null && active.folder !== installed.folder ? ` and ${active.folder} is released` : ''}`,
          details: { action: 'released', folder: active.folder, labels: [active.runtimeVersion, active.version], version: active.version, slot: active.slot, replacedBy: installed.version },
        },
        at,
      );
    }
  });
  changes.push(`${record.name}: the ${active.slot} slot now holds ${installed.version}, as installed`);
  await context.changed();
  return changes;
}

/** Reconciles every plugin that has slots. */
export async function reconcileAll(context: RolloutContext): Promise<string[]> {
  const { rows } = await context.db.query<{ plugin_id: string }>('SELECT DISTINCT plugin_id FROM deployments');
  const changes: string[] = [];
  for (const row of rows) changes.push(...(await reconcilePlugin(context, row.plugin_id)));
  return changes;
}
