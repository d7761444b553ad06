/**
 * @module composition/rollout-wiring
 * Blue-green upgrades in the app (issue #11): the rollout service over the plugins service and
 * the supervisor, judged from the call events (flushed before each look, so this replica's
 * last calls count), with repeated rollbacks queued for re-verification (the verification job
 * queue, one replica runs each). With verification on install (`QUIVER_VERIFY_ON_INSTALL`), a
 * staged version is verified on the same job queue before its first canary step. Servers call
 * `start()` (routing table, NOTIFY listener, the leased monitor); one-shot CLI commands use it
 * without starting the monitor.
 */
import type { QuiverConfig } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import type { PluginService } from '../plugins/service.ts';
import type { Jobs } from '../jobs/index.ts';
import { createRolloutService, type RolloutService, type VerifyStaged } from '../rollouts/index.ts';
import type { CallEventRecorder } from '../runtime/call-event-recorder.ts';
import type { Supervisor } from '../runtime/index.ts';
import type { Database } from '../store/database.ts';
import type { VerificationService } from '../verification/service/index.ts';
import { pluginFolders } from './app-wiring.ts';

/** Builds the rollout service of the app. */
export function wireRollouts(input: {
  db: Database;
  config: QuiverConfig;
  logger: Logger;
  plugins: PluginService;
  supervisor: Supervisor;
  callEvents: Pick<CallEventRecorder, 'flush'>;
  verification: Pick<VerificationService, 'enqueue' | 'verifyStaged'>;
  jobs?: Jobs;
}): RolloutService {
  const verifyStaged: VerifyStaged = async ({ pluginId, pluginName, version, staged, launch, signal }) => {
    const fields = staged.fields;
    const report = await input.verification.verifyStaged(
      { pluginId, pluginName, version, sourceType: fields.sourceType, source: fields.source, manifest: fields.manifest, intelligence: staged.shippedPid ?? null, tools: staged.served, launch },
      { signal },
    );
    return { trustLevel: report.recommendation.trustLevel, score: report.overallScore, grade: report.grade, caps: report.recommendation.caps, reportJobId: report.jobId };
  };
  return createRolloutService({
    ...(input.config.verification.onInstall === 'background' ? { verifyStaged } : {}),
    jobs: input.jobs,
    db: input.db,
    plugins: input.plugins,
    supervisor: input.supervisor,
    settings: input.config.rollouts,
    logger: input.logger.child({ part: 'rollouts' }),
    stateRoot: pluginFolders(input.config).stateRoot,
    // Issue #29: the folder sweep (a periodic job) deletes version folders nothing uses any more.
    cacheDir: pluginFolders(input.config).cacheDir,
    flushCallEvents: async () => {
      await input.callEvents.flush();
    },
    requestReverification: async (pluginId, reason) => {
      await input.verification.enqueue(pluginId, reason);
    },
  });
}
