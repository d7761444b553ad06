/**
 * @module plugins/service/lifecycle
 * Installed plugins as a whole: list, show (enablements, secret keys — never values —, settings,
 * state folder, tool count, PID status), their tools, turning one on or off everywhere (`status`)
 * and removing one (its tools soft-deleted through the catalog, its enablements, secrets and
 * settings deleted, its cache folder released). `add`, `update` and `sync` live in install.ts
 * and reinstall.ts.
 */
import { invalidInput } from '../../core/errors.ts';
import { effectiveExecution, executionFromPid, type EffectiveExecution } from '../../runtime/execution-profile.ts';
import { pluginStateDir } from '../../runtime/state-dir.ts';
import { deleteAllPluginEnv, listPluginEnv } from '../../store/repositories/plugin-env.ts';
import { listPluginMounts } from '../../store/repositories/plugin-mounts.ts';
import { deletePluginEnablements, findIntelligence, listPluginRecords, setPluginStatus } from '../../store/repositories/plugins.ts';
import { deletePluginSecrets, listSecrets } from '../../store/repositories/secrets.ts';
import { listPluginEnablements } from '../../store/repositories/workspaces.ts';
import { releaseCache } from './commit.ts';
import type { PluginContext } from './context.ts';
import { allTools, parseCredentials, requirePlugin, toPublic } from './records.ts';
import type { PluginService } from './types.ts';

/** The list, show, status and remove methods of the service. */
export type LifecyclePart = Pick<PluginService, 'list' | 'show' | 'tools' | 'setStatus' | 'remove'>;

/** The execution profile a plugin's calls run with; null when its stored PID's cannot be applied. */
function effectiveProfileOf(pid: Record<string, unknown> | undefined): EffectiveExecution | null {
  try {
    return effectiveExecution(executionFromPid(pid));
  } catch {
    return null;
  }
}

/** Creates the lifecycle part of the service. */
export function createLifecyclePart(context: PluginContext): LifecyclePart {
  const { db, catalog, supervisor, logger } = context;
  return {
    async list(listOptions = {}) {
      const records = await listPluginRecords(db, { includeRemoved: listOptions.includeRemoved ?? false });
      return Promise.all(records.map((record) => toPublic(context, record)));
    },

    async show(reference) {
      const record = await requirePlugin(context, reference, { includeRemoved: true });
      const declared = new Set(parseCredentials(record.credentials).map((credential) => credential.name));
      const intelligence = await findIntelligence(db, record.id);
      const page = await catalog.listTools({ pluginId: record.id, limit: 1 });
      return {
        plugin: await toPublic(context, record),
        enablements: await listPluginEnablements(db, record.id),
        secrets: (await listSecrets(db, record.id)).map((row) => ({ key: row.key, declared: declared.has(row.key), updatedAt: row.updatedAt })),
        env: await listPluginEnv(db, record.id),
        stateDir: context.stateRoot === undefined ? null : pluginStateDir(context.stateRoot, record.id),
        toolCount: page.total,
        intelligence:
          intelligence === undefined
            ? null
            : { status: intelligence.validationStatus, origin: intelligence.origin, contentHash: intelligence.contentHash },
        execution: effectiveProfileOf(intelligence?.pid),
        mounts: await listPluginMounts(db, record.id),
      };
    },

    async tools(reference) {
      return allTools(context, (await requirePlugin(context, reference)).id);
    },

    async setStatus(reference, status) {
      const record = await requirePlugin(context, reference);
      if (record.status === 'failed') throw invalidInput(`plugin '${record.name}' failed to install; add it again`);
      await setPluginStatus(db, record.id, status, context.now());
      if (status === 'disabled') await supervisor.stop?.(record.id).catch(() => undefined);
      context.changed({ kind: 'status', pluginId: record.id });
      return toPublic(context, await requirePlugin(context, record.id));
    },

    async remove(reference) {
      const record = await requirePlugin(context, reference);
      // Through the catalog's sync, like every tool write: an empty list soft-deletes them all (versioned).
      await catalog.syncPlugin({ pluginId: record.name, version: record.version ?? 'removed', tools: [] });
      await db.transaction(async (tx) => {
        await deletePluginEnablements(tx, record.id);
        await deletePluginSecrets(tx, record.id);
        await deleteAllPluginEnv(tx, record.id);
        await setPluginStatus(tx, record.id, 'removed', context.now());
      });
      try {
        await supervisor.stop?.(record.id).catch(() => undefined);
        await releaseCache(context, record.source['cachePath'], record.source['inPlace'] === true, record.id);
      } finally {
        context.changed({ kind: 'installation', pluginId: record.id });
      }
      logger.info({ plugin: record.name }, 'plugin removed');
    },
  };
}
