/**
 * @module rollouts
 * Upgrades without downtime (issue #11; DESIGN §3.6; seed 000 §5): blue-green slots per plugin,
 * canary traffic in steps, health compared slot against slot, automatic rollback. Assembled
 * from parts with one job each: `upgrade` (stage into the idle slot, start), `router` (which
 * slot serves a call, on the hot path), `judge` (pure verdict), `decider` (the leased monitor),
 * `transitions` (step, promote, roll back, pause), `views` (status for CLI, API and UI).
 *
 * @example
 * const rollouts = createRolloutService({ db, plugins, supervisor, settings: config.rollouts });
 * await rollouts.start();                       // servers: routing table + monitor
 * await rollouts.upgrade('calc', { ref: 'v2.0.0' });
 * const spec = rollouts.route('calc', stableSpec, session.sessionId, 'add');
 */
import { randomBytes } from 'node:crypto';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { PluginService } from '../plugins/service.ts';
import type { Supervisor } from '../runtime/supervisor.ts';
import type { UpstreamSpec } from '../runtime/types.ts';
import type { Database } from '../store/database.ts';
import { findPluginRecordById } from '../store/repositories/plugins.ts';
import { ROLLOUTS_CHANNEL, requireInstalledPlugin, type RolloutContext } from './context.ts';
import { tick, type Decision } from './decider.ts';
import { latestRolloutOf, openRolloutOf } from './repository.ts';
import { createSlotRouter } from './router.ts';
import { promote, rollBack, setPaused } from './transitions.ts';
import { defaultRolloutSettings, type Rollout, type RolloutSettings, type RolloutView } from './types.ts';
import { startUpgrade, type UpgradeRequest } from './upgrade.ts';
import { diskUse, rolloutView, rolloutViews, type DiskUse } from './views.ts';
import { reconcilePlugin } from './reconcile.ts';
import type { SlotTarget } from './routing.ts';
import { FOLDER_SWEEP_JOB, sweepFolders, type SweepOptions, type SweepReport } from './sweep.ts';
import { registerVerificationJob } from './verify.ts';
import type { VerifyStaged } from './types.ts';
import type { Jobs } from '../jobs/index.ts';

export * from './types.ts';
export { bucketOf, routesToCanary, routesTargetToCanary, canaryServes, type SlotTarget } from './routing.ts';
export { FOLDER_SWEEP_JOB, isVersionFolder, type SweepOptions, type SweepReport } from './sweep.ts';
export type { DiskUse } from './views.ts';
export { judge, healthScore, type Verdict } from './judge.ts';
export type { Decision } from './decider.ts';
export type { UpgradeRequest } from './upgrade.ts';
export { ROLLOUTS_CHANNEL } from './context.ts';
export { ROLLOUT_VERIFY_JOB, rejectionOf } from './verify.ts';
export type { StagedVerdict, StagedVerificationRequest, VerifyStaged } from './types.ts';

/** Options of `createRolloutService`. */
export interface RolloutServiceOptions {
  db: Database;
  plugins: Pick<PluginService, 'stageVersion' | 'commitStagedVersion' | 'upstreamSpec' | 'update'>;
  supervisor: Pick<Supervisor, 'listTools' | 'retireVersion' | 'processes' | 'listResources' | 'listResourceTemplates' | 'listPrompts'>;
  settings?: Partial<RolloutSettings>;
  /** The plugins' install cache; the folder sweep deletes unused version folders below it (omit: no sweep). */
  cacheDir?: string | undefined;
  logger?: Logger;
  clock?: () => Date;
  /** The supervisor's state root: each canary slot gets its own state folder below it. */
  stateRoot?: string | undefined;
  flushCallEvents?: () => Promise<void>;
  requestReverification?: (pluginId: string, reason: string) => Promise<void>;
  /** Verifies staged versions before they take traffic; omit when verification is off. */
  verifyStaged?: VerifyStaged | undefined;
  /** The job queue staged verifications run on (its worker runs in servers). */
  jobs?: Pick<Jobs, 'register' | 'enqueue' | 'every'> | undefined;
}

/** The rollout service. */
export interface RolloutService {
  /** Stages a new version into the idle slot and starts its rollout. */
  upgrade(plugin: string, request?: UpgradeRequest): Promise<{ rollout: Rollout; view: RolloutView; warnings: string[] }>;
  status(plugin: string): Promise<RolloutView>;
  /** Every plugin with a rollout (open ones first). */
  list(): Promise<RolloutView[]>;
  /** Promotes the canary now, skipping the remaining steps. */
  promote(plugin: string): Promise<RolloutView>;
  /** Rolls an open rollout back now. */
  rollback(plugin: string, reason?: string): Promise<RolloutView>;
  pause(plugin: string): Promise<RolloutView>;
  resume(plugin: string): Promise<RolloutView>;
  /** The spec serving this call (canary or `stable`); synchronous, no database. */
  route(pluginName: string, stable: UpstreamSpec, sessionKey: string, toolName: string): UpstreamSpec;
  /** The same for a resource read or subscription, a prompt, or a completion of either (issue #29). */
  routeTarget(pluginName: string, stable: UpstreamSpec, sessionKey: string, target: SlotTarget): UpstreamSpec;
  /** One folder sweep now (servers run it as the periodic job `rollouts.sweep-folders`). */
  sweep(options?: SweepOptions): Promise<SweepReport>;
  /** A plugin's install folders and their size on disk. */
  diskUse(plugin: string): Promise<DiskUse>;
  /** Brings a plugin's slots in line with its row after a change outside a rollout (removal, update). */
  pluginChanged(pluginId: string): Promise<string[]>;
  /** One monitor pass now (servers run it on a timer; tests and the CLI may call it). */
  tick(): Promise<Decision[]>;
  /** Loads the routing table, listens for other replicas' changes and starts the monitor. */
  start(options?: { monitor?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** Monitor ticks between two reads of the rollouts table while none is open. */
const IDLE_RECHECK_TICKS = 10;

/** Creates the rollout service; nothing runs before `start()` (routing is off until then). */
export function createRolloutService(options: RolloutServiceOptions): RolloutService {
  const logger = (options.logger ?? silentLogger).child({ component: 'rollouts' });
  const settings: RolloutSettings = { ...defaultRolloutSettings, ...options.settings };
  const owner = `rollouts-${randomBytes(6).toString('hex')}`;
  // A lease outlives a few missed ticks, so a busy replica keeps its rollouts; a dead one loses them fast.
  const leaseMs = Math.max(5_000, settings.tickMs * 5);
  const router = createSlotRouter({
    db: options.db,
    pluginNameOf: async (pluginId) => (await findPluginRecordById(options.db, pluginId))?.name,
    stateRoot: options.stateRoot,
    logger,
  });
  const context: RolloutContext = {
    db: options.db,
    plugins: options.plugins,
    supervisor: options.supervisor,
    router,
    settings,
    stateRoot: options.stateRoot,
    cacheDir: options.cacheDir,
    logger,
    now: options.clock ?? (() => new Date()),
    flushCallEvents: options.flushCallEvents ?? (async () => undefined),
    requestReverification: options.requestReverification ?? (async () => undefined),
    verifyStaged: options.verifyStaged,
    jobs: options.jobs,
    async changed() {
      await router.load();
      await options.db.notify(ROLLOUTS_CHANNEL, 'changed').catch((error) => logger.warn({ err: error }, 'rollouts: could not notify the other replicas'));
    },
  };
  if (options.jobs !== undefined) registerVerificationJob(options.jobs, context);
  // One replica at a time sweeps (the queue's lease); a killed run is taken over after its lease (sweep.ts says why nothing in use is lost).
  if (options.jobs !== undefined && options.cacheDir !== undefined && settings.sweepIntervalMs > 0) {
    options.jobs.every(FOLDER_SWEEP_JOB, settings.sweepIntervalMs, async ({ signal }) => {
      const report = await sweepFolders(context, { signal });
      return { removed: report.removed.map((entry) => entry.folder), kept: report.kept.length, trashEmptied: report.trashEmptied, reconciled: report.reconciled };
    });
  }
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<Decision[]> | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let closed = false;

  async function openOf(plugin: string): Promise<{ name: string; rollout: Rollout }> {
    const record = await requireInstalledPlugin(context, plugin);
    const rollout = await openRolloutOf(context.db, record.id);
    if (rollout === undefined) throw new QuiverError(ErrorCodes.conflict, `plugin '${record.name}' has no rollout in progress`, { details: { plugin: record.name } });
    return { name: record.name, rollout };
  }

  const runTick = async (): Promise<Decision[]> => {
    const run = tick(context, owner, leaseMs);
    ticking = run;
    try {
      return await run;
    } finally {
      if (ticking === run) ticking = undefined;
    }
  };

  return {
    async upgrade(plugin, request = {}) {
      const started = await startUpgrade(context, plugin, request);
      return { rollout: started.rollout, view: await rolloutView(context, plugin), warnings: started.warnings };
    },
    status: (plugin) => rolloutView(context, plugin),
    list: () => rolloutViews(context),
    async promote(plugin) {
      const { name, rollout } = await openOf(plugin);
      if (rollout.status === 'verifying') throw new QuiverError(ErrorCodes.conflict, `the new version of '${name}' is still being verified; promote it once it takes traffic, or roll it back`);
      await promote(context, rollout, name, 'manual');
      return rolloutView(context, plugin);
    },
    async rollback(plugin, reason) {
      const record = await requireInstalledPlugin(context, plugin);
      const rollout = await openRolloutOf(context.db, record.id);
      if (rollout === undefined) {
        const latest = await latestRolloutOf(context.db, record.id);
        throw new QuiverError(
          ErrorCodes.conflict,
          latest?.status === 'promoted'
            ? `the last rollout of '${record.name}' was promoted; go back with 'quiver plugin upgrade ${record.name} --ref <previous ref>'`
            : `plugin '${record.name}' has no rollout in progress`,
        );
      }
      await rollBack(context, rollout, record.name, 'manual', reason ?? 'rolled back by an admin');
      return rolloutView(context, plugin);
    },
    async pause(plugin) {
      await setPaused(context, (await openOf(plugin)).rollout, true);
      return rolloutView(context, plugin);
    },
    async resume(plugin) {
      await setPaused(context, (await openOf(plugin)).rollout, false);
      return rolloutView(context, plugin);
    },
    route: (pluginName, stable, sessionKey, toolName) => router.route(pluginName, stable, sessionKey, { kind: 'tool', name: toolName }),
    routeTarget: (pluginName, stable, sessionKey, target) => router.route(pluginName, stable, sessionKey, target),
    sweep: (sweepOptions) => sweepFolders(context, sweepOptions),
    diskUse: (plugin) => diskUse(context, plugin),
    pluginChanged: (pluginId) => reconcilePlugin(context, pluginId),
    tick: runTick,
    async start(startOptions = {}) {
      await router.load();
      unlisten = await options.db.listen(ROLLOUTS_CHANNEL, () => void router.load());
      if (startOptions.monitor === false || timer !== undefined || closed) return;
      let idleTicks = 0;
      timer = setInterval(() => {
        if (ticking !== undefined) return;
        // With no open rollout there is nothing to judge, and every change reaches the router
        // at once (this replica's transitions reload it, other replicas' arrive by NOTIFY): the
        // table is then re-read only every IDLE_RECHECK_TICKS ticks as the safety net, not twice
        // per tick (the tick's read and the reload were 2 statements a second on an idle
        // service, issue #28).
        if (router.openCount() === 0 && ++idleTicks < IDLE_RECHECK_TICKS) return;
        idleTicks = 0;
        void runTick()
          .then(() => router.load())
          .catch((error) => logger.warn({ err: error }, 'rollouts: monitor pass failed'));
      }, settings.tickMs);
      timer.unref();
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await ticking?.catch(() => undefined);
      await unlisten?.().catch(() => undefined);
    },
  };
}
