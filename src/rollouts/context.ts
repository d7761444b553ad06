/**
 * @module rollouts/context
 * What the parts of the rollout service share: the database, the plugins service (staging and
 * committing versions, launch specs), the supervisor (the stable slot's served tools), the
 * router, settings, clock and logger, and `changed()`, which reloads this replica's routing
 * table and tells the other replicas (NOTIFY on `quiver_rollouts`).
 */
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Jobs } from '../jobs/index.ts';
import type { PluginService } from '../plugins/service.ts';
import type { Supervisor } from '../runtime/supervisor.ts';
import type { Database } from '../store/database.ts';
import { findPluginRecordById, findPluginRecordByName, type PluginRecord } from '../store/repositories/plugins.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import type { SlotRouter } from './router.ts';
import type { RolloutSettings, VerifyStaged } from './types.ts';

/** The notification channel of rollout changes. */
export const ROLLOUTS_CHANNEL = 'quiver_rollouts';

/** Shared internals of the rollout service. */
export interface RolloutContext {
  db: Database;
  plugins: Pick<PluginService, 'stageVersion' | 'commitStagedVersion' | 'upstreamSpec' | 'update'>;
  supervisor: Pick<Supervisor, 'listTools' | 'retireVersion' | 'processes' | 'listResources' | 'listResourceTemplates' | 'listPrompts'>;
  router: SlotRouter;
  /** The plugins' install cache (`<home>/plugins`): the folder sweep deletes unused version folders below it. */
  cacheDir: string | undefined;
  settings: RolloutSettings;
  /** The supervisor's state root (each canary slot has its own state folder below it). */
  stateRoot: string | undefined;
  logger: Logger;
  now(): Date;
  /** Makes call events of this replica visible to the judge before it reads them. */
  flushCallEvents(): Promise<void>;
  /** Queues a re-verification of a plugin whose new versions keep failing (seed 000 §5.2). */
  requestReverification(pluginId: string, reason: string): Promise<void>;
  /** Verifies a staged version before it takes traffic; absent when verification is off (`QUIVER_VERIFY_ON_INSTALL=off`). */
  verifyStaged: VerifyStaged | undefined;
  /** Where staged verifications are queued (one replica runs each); absent, they run in the background here. */
  jobs: Pick<Jobs, 'enqueue'> | undefined;
  /** Reloads the routing table here and notifies the other replicas. */
  changed(): Promise<void>;
}

/** A plugin by name or id; `not_found` otherwise, `conflict` for one that is not installed. */
export async function requireInstalledPlugin(context: Pick<RolloutContext, 'db'>, reference: string): Promise<PluginRecord> {
  const record = (await findPluginRecordByName(context.db, reference)) ?? (isUuid(reference) ? await findPluginRecordById(context.db, reference) : undefined);
  if (record === undefined || record.status === 'removed') throw notFound('plugin', reference);
  if (record.status === 'failed') throw new QuiverError(ErrorCodes.conflict, `plugin '${record.name}' is not installed (its install failed)`);
  return record;
}
