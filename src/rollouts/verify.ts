/**
 * @module rollouts/verify
 * The staged version is verified before it takes traffic (issue #11: "install, discovery and
 * verification as for a new plugin, then rolls out"). An upgrade with verification on opens
 * its rollout in `verifying` (the canary slot at 0 %) and queues a `rollouts.verify` job; the
 * job runs the verification pipeline on the staged version and then either starts the first
 * canary step or rejects the version: the rollout ends rolled back with the verdict as its
 * reason, an alert is logged, and the failed slot is kept for inspection. Until it passed, the
 * new version runs only in the pipeline's strictest sandbox; its slot's process (with the
 * slot's credentials and trust) is started after the verdict, before its first call.
 *
 * The gate (docs/rollouts.md "Verification before traffic"): the staged version may take
 * traffic when its verified level is not lower than the level the installed version was
 * verified at, and no stage capped it at UNVERIFIED (tool poisoning and the like are findings,
 * not missing evidence). An installed version never verified sets no floor.
 */
import { isQuiverError } from '../core/errors.ts';
import type { JobHandler, Jobs } from '../jobs/index.ts';
import type { UpstreamSpec } from '../runtime/types.ts';
import { findPluginRecordById } from '../store/repositories/plugins.ts';
import type { RolloutContext } from './context.ts';
import { failedJob, findDeployment, findRollout, insertRolloutEvent, setDeploymentState, setRoutableSurface, updateRollout } from './repository.ts';
import { routableSurface } from './surface.ts';
import { canarySpec } from './slot-spec.ts';
import { rollBack } from './transitions.ts';
import type { Rollout, StagedVerdict, VerifyStaged } from './types.ts';

/** The job kind of a staged version's verification. */
export const ROLLOUT_VERIFY_JOB = 'rollouts.verify';

const TRUST_ORDER: readonly string[] = ['UNVERIFIED', 'COMMUNITY', 'ENTERPRISE', 'VERIFIED_PUBLISHER', 'OFFICIAL'];

/** The gate: undefined when the staged version may take traffic, else why not. */
export function rejectionOf(verdict: StagedVerdict, installedLevel: string | null): string | undefined {
  const hardCap = verdict.caps.find((cap) => cap.level === 'UNVERIFIED');
  if (hardCap !== undefined) return `verification capped it at UNVERIFIED (${hardCap.stage}: ${hardCap.reason})`;
  const floor = installedLevel === null ? -1 : TRUST_ORDER.indexOf(installedLevel);
  if (TRUST_ORDER.indexOf(verdict.trustLevel) < floor) {
    return `verified at ${verdict.trustLevel} (score ${verdict.score}), below ${installedLevel}, the level the installed version runs at`;
  }
  return undefined;
}

/** Queues the verification of a rollout opened in `verifying` (in the background without a job queue). */
export async function queueVerification(context: RolloutContext, rollout: Rollout): Promise<void> {
  if (context.jobs !== undefined) {
    await context.jobs.enqueue(ROLLOUT_VERIFY_JOB, { rolloutId: rollout.id }, { dedupeKey: verificationKey(rollout.id) });
    return;
  }
  void verifyRollout(context, rollout.id, new AbortController().signal).catch((error) => context.logger.warn({ err: error, rolloutId: rollout.id }, 'rollout: verification failed'));
}

/** The `rollouts.verify` job handler. */
export function verificationJob(context: RolloutContext): JobHandler {
  return async ({ job, signal }) => {
    const rolloutId = (job.payload as { rolloutId?: unknown }).rolloutId;
    if (typeof rolloutId !== 'string') throw new Error('rollouts.verify job without rolloutId');
    // A verifier that throws is retried with the queue's backoff (a transient fault must not
    // reject a good version); the last attempt fails closed.
    const lastAttempt = job.attempts >= job.maxAttempts;
    try {
      return await verifyRollout(context, rolloutId, signal, lastAttempt);
    } catch (error) {
      // The last attempt failed (the database, a shutdown each time): fail closed rather than
      // leave the rollout waiting in `verifying` for ever.
      if (job.attempts < job.maxAttempts) throw error;
      const rollout = await findRollout(context.db, rolloutId);
      if (rollout?.status === 'verifying') {
        const record = await findPluginRecordById(context.db, rollout.pluginId);
        await reject(context, rollout, record?.name ?? rollout.pluginId, `verification could not run (${job.attempts} attempts): ${(error as Error).message}`, {});
      }
      return { rejected: true, error: (error as Error).message };
    }
  };
}

/**
 * Verifies a verifying rollout's staged version and starts or rejects it. A verifier that
 * throws rejects the version on the `lastAttempt`; before it the error is thrown for a retry.
 */
export async function verifyRollout(context: RolloutContext, rolloutId: string, signal: AbortSignal, lastAttempt = true): Promise<Record<string, unknown>> {
  const rollout = await findRollout(context.db, rolloutId);
  if (rollout === undefined || rollout.status !== 'verifying') return { skipped: `rollout is ${rollout?.status ?? 'gone'}` };
  const record = await findPluginRecordById(context.db, rollout.pluginId);
  const canary = await findDeployment(context.db, rollout.toDeployment);
  if (record === undefined || canary === undefined || canary.install === null || context.verifyStaged === undefined) {
    await rollBack(context, rollout, record?.name ?? rollout.pluginId, 'automatic', 'the staged version could not be verified: its install or the verifier is missing');
    return { rejected: true };
  }
  let verdict: StagedVerdict;
  let launch: UpstreamSpec;
  try {
    const stable = await context.plugins.upstreamSpec(record.name);
    launch = canarySpec(stable, canary.install, canary.slot, canary.runtimeVersion, context.stateRoot);
    verdict = await context.verifyStaged({ pluginId: record.id, pluginName: record.name, version: canary.version, staged: canary.install, launch, signal });
  } catch (error) {
    if (signal.aborted || !lastAttempt) throw error; // shutdown, a lost lease or attempts left: the job runs again
    // Fail closed: a version that cannot be verified takes no traffic.
    const reason = `verification of ${canary.version} failed to run: ${(error as Error).message}`;
    await reject(context, rollout, record.name, reason, {});
    return { rejected: true, reason };
  }
  const details = { trustLevel: verdict.trustLevel, score: verdict.score, grade: verdict.grade, caps: verdict.caps, reportJobId: verdict.reportJobId, installedLevel: record.trustLevel };
  const rejection = rejectionOf(verdict, record.trustLevel);
  if (rejection !== undefined) {
    await reject(context, rollout, record.name, rejection, details);
    return { rejected: true, reason: rejection };
  }
  // Started (with the slot's privileges) only now that it passed, before its first call: its
  // first calls must not pay the process start, and one that cannot start takes no traffic.
  try {
    await context.supervisor.listTools(launch);
  } catch (error) {
    const reason = `${canary.version} passed verification but did not start: ${(error as Error).message}`;
    await reject(context, rollout, record.name, reason, details);
    return { rejected: true, reason };
  }
  // Now that its process runs: the resources and prompts it serves unchanged are routed by slot too (issue #29).
  await setRoutableSurface(context.db, canary.id, await routableSurface(context.supervisor, await context.plugins.upstreamSpec(record.name), launch));
  await startFirstStep(context, rollout, canary.version, details);
  return { started: true, trustLevel: verdict.trustLevel };
}

/**
 * The safety net of the job's own last-attempt path: a verification job that ended `failed`
 * without rejecting its rollout (its worker died on the last attempt, or the rejection itself
 * failed) leaves the rollout in `verifying`; the monitor rejects it here (fail closed).
 */
export async function rejectFailedVerifications(context: RolloutContext, verifying: readonly Rollout[]): Promise<void> {
  for (const rollout of verifying) {
    const failed = await failedJob(context.db, ROLLOUT_VERIFY_JOB, verificationKey(rollout.id));
    if (failed === undefined) continue;
    const record = await findPluginRecordById(context.db, rollout.pluginId);
    await reject(context, rollout, record?.name ?? rollout.pluginId, `the verification job failed for good (${failed.attempts} attempts): ${failed.lastError ?? 'no error recorded'}`, {});
  }
}

/** The dedupe key of a rollout's verification job. */
function verificationKey(rolloutId: string): string {
  return `rollout-verify:${rolloutId}`;
}

/**
 * One history line (`rolled_back`, reason `rejected by verification: …`, the verdict in its
 * details) and the rollback's alert; nothing when an admin rolled it back meanwhile.
 */
async function reject(context: RolloutContext, rollout: Rollout, pluginName: string, reason: string, details: Record<string, unknown>): Promise<void> {
  try {
    await rollBack(context, rollout, pluginName, 'automatic', `rejected by verification: ${reason}`, { verification: details });
  } catch (error) {
    if (!isQuiverError(error, 'conflict')) throw error;
  }
}

/** Verified: the rollout starts its first step now (the step's window starts with it). */
async function startFirstStep(context: RolloutContext, rollout: Rollout, version: string, details: Record<string, unknown>): Promise<void> {
  const percent = rollout.steps[0]!;
  const at = context.now();
  const moved = await context.db.transaction(async (tx) => {
    const next = await updateRollout(tx, rollout.id, ['verifying'], { status: 'running', step: 0, stepStartedAt: at }, at);
    if (next === undefined) return undefined;
    await setDeploymentState(tx, rollout.toDeployment, 'canary', percent, at);
    await setDeploymentState(tx, rollout.fromDeployment, 'active', 100 - percent, at);
    await insertRolloutEvent(
      tx,
      { rolloutId: rollout.id, pluginId: rollout.pluginId, kind: 'verified', message: `${version} verified at ${String(details['trustLevel'])} (score ${String(details['score'])}): ${percent} % of traffic`, details: { ...details, percent } },
      at,
    );
    return next;
  });
  if (moved === undefined) return; // rolled back by an admin meanwhile
  context.logger.info({ pluginId: rollout.pluginId, rolloutId: rollout.id, version, trustLevel: details['trustLevel'] }, 'rollout: staged version verified, first step');
  await context.changed();
}

/** Registers the job handler (servers run it; one-shot commands only enqueue). */
export function registerVerificationJob(jobs: Pick<Jobs, 'register'>, context: RolloutContext): void {
  jobs.register(ROLLOUT_VERIFY_JOB, verificationJob(context));
}
