/**
 * @module rollouts/transitions
 * The moves of a rollout, each one transaction plus a history line, guarded by the status it
 * expects (a move that lost a race to another replica or a manual command changes nothing):
 * next step, promotion (the staged version becomes the installed one and the catalog moves to
 * its tools), rollback (traffic back to the healthy slot, the failed version kept, an alert
 * logged, re-verification queued when the version keeps failing), pause and resume.
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import type { Queryable } from '../store/database.ts';
import { findDeployment, insertRolloutEvent, rollbacksOfVersion, setDeploymentState, updateRollout } from './repository.ts';
import type { RolloutContext } from './context.ts';
import type { Rollout, RolloutEvent, RolloutStatus } from './types.ts';

type EventInput = Pick<RolloutEvent, 'kind' | 'message' | 'details'>;

async function record(tx: Queryable, rollout: Rollout, event: EventInput, at: Date): Promise<void> {
  await insertRolloutEvent(tx, { rolloutId: rollout.id, pluginId: rollout.pluginId, ...event }, at);
}

function lostRace(rollout: Rollout, what: string): QuiverError {
  return new QuiverError(ErrorCodes.conflict, `the rollout changed meanwhile; it could not ${what}`, { details: { rolloutId: rollout.id } });
}

/** Moves to the next step (not the last: that is `promote`). */
export async function advanceStep(context: RolloutContext, rollout: Rollout, details: Record<string, unknown>): Promise<Rollout> {
  const at = context.now();
  const step = rollout.step + 1;
  const percent = rollout.steps[step]!;
  const moved = await context.db.transaction(async (tx) => {
    const next = await updateRollout(tx, rollout.id, ['running'], { step, stepStartedAt: at }, at);
    if (next === undefined) return undefined;
    await setDeploymentState(tx, rollout.toDeployment, 'canary', percent, at);
    await setDeploymentState(tx, rollout.fromDeployment, 'active', 100 - percent, at);
    await record(tx, next, { kind: 'step', message: `canary traffic ${rollout.steps[rollout.step]} % → ${percent} %`, details: { step, percent, ...details } }, at);
    return next;
  });
  if (moved === undefined) throw lostRace(rollout, 'move to the next step');
  context.logger.info({ pluginId: rollout.pluginId, rolloutId: rollout.id, percent }, 'rollout: next step');
  await context.changed();
  return moved;
}

/** Promotes the canary: it becomes the installed version (catalog, pins, PID) and takes all traffic. */
export async function promote(context: RolloutContext, rollout: Rollout, pluginName: string, how: 'automatic' | 'manual', details: Record<string, unknown> = {}): Promise<Rollout> {
  const canary = await findDeployment(context.db, rollout.toDeployment);
  if (canary === undefined || canary.install === null) throw new QuiverError(ErrorCodes.conflict, `the canary of '${pluginName}' has no staged install to promote`);
  // First the install (its own transactions, as every update): the stable spec now is the new
  // version; the canary spec still routes its share to the same version until the state below.
  const previous = await findDeployment(context.db, rollout.fromDeployment);
  const report = await context.plugins.commitStagedVersion(pluginName, canary.install);
  const at = context.now();
  const moved = await context.db.transaction(async (tx) => {
    const next = await updateRollout(tx, rollout.id, ['running', 'paused'], { status: 'promoted', step: rollout.steps.length - 1, stepStartedAt: at, finished: true }, at);
    if (next === undefined) return undefined;
    await setDeploymentState(tx, canary.id, 'active', 100, at, canary.install!.fields.version ?? 'local');
    await setDeploymentState(tx, rollout.fromDeployment, 'idle', 0, at);
    await record(tx, next, { kind: 'promoted', message: `${canary.version} promoted (${how}): it serves all traffic and the catalog moved to its tools`, details: { how, tools: report.tools, ...details, folders: { active: canary.folder, idle: previous?.folder ?? null } } }, at);
    return next;
  });
  if (moved === undefined) throw lostRace(rollout, 'promote');
  context.logger.info({ plugin: pluginName, rolloutId: rollout.id, version: canary.version, how }, 'rollout: promoted');
  await context.changed();
  // This replica's processes of the old version and of the canary label stop once idle (the
  // promoted version runs under its plain version label now); other replicas' idle out.
  if (previous !== undefined) context.supervisor.retireVersion(rollout.pluginId, previous.runtimeVersion);
  context.supervisor.retireVersion(rollout.pluginId, canary.runtimeVersion);
  return moved;
}

/** Rolls back: all traffic to the stable slot, the canary kept as `failed` for inspection, the developer alerted. */
export async function rollBack(context: RolloutContext, rollout: Rollout, pluginName: string, how: 'automatic' | 'manual', reason: string, details: Record<string, unknown> = {}): Promise<Rollout> {
  const at = context.now();
  const canary = await findDeployment(context.db, rollout.toDeployment);
  const moved = await context.db.transaction(async (tx) => {
    const next = await updateRollout(tx, rollout.id, ['verifying', 'running', 'paused'], { status: 'rolled_back', reason, finished: true }, at);
    if (next === undefined) return undefined;
    await setDeploymentState(tx, rollout.toDeployment, 'failed', 0, at);
    await setDeploymentState(tx, rollout.fromDeployment, 'active', 100, at);
    await record(tx, next, { kind: 'rolled_back', message: `${canary?.version ?? 'the new version'} rolled back (${how}): ${reason}`, details: { how, reason, ...details, folders: { failed: canary?.folder ?? null } } }, at);
    return next;
  });
  if (moved === undefined) throw lostRace(rollout, 'roll back');
  // The developer alert (seed 000 §5.2): a warning in the log, the event above, the UI's history.
  context.logger.warn({ plugin: pluginName, rolloutId: rollout.id, version: canary?.version, how, reason }, 'rollout: rolled back');
  await context.changed();
  if (canary !== undefined) context.supervisor.retireVersion(rollout.pluginId, canary.runtimeVersion);
  if (canary !== undefined) await reverifyIfRepeated(context, moved, pluginName, canary.version);
  return moved;
}

/** A version rolled back again and again: queue the plugin for re-verification (seed 000 §5.2). */
async function reverifyIfRepeated(context: RolloutContext, rollout: Rollout, pluginName: string, version: string): Promise<void> {
  const count = await rollbacksOfVersion(context.db, rollout.pluginId, version);
  if (count < context.settings.reverifyAfter) return;
  const reason = `version ${version} of '${pluginName}' was rolled back ${count} times`;
  try {
    await context.requestReverification(rollout.pluginId, reason);
    await record(context.db, rollout, { kind: 'reverification', message: `re-verification queued: ${reason}`, details: { version, rollbacks: count } }, context.now());
  } catch (error) {
    context.logger.warn({ err: error, plugin: pluginName }, 'rollout: could not queue a re-verification');
  }
}

/**
 * Pauses (traffic held where it is, no automatic step or promotion; the monitor still rolls a
 * degrading canary back) or resumes (the step's window starts again).
 */
export async function setPaused(context: RolloutContext, rollout: Rollout, paused: boolean): Promise<Rollout> {
  const at = context.now();
  const from: RolloutStatus = paused ? 'running' : 'paused';
  const moved = await context.db.transaction(async (tx) => {
    const next = await updateRollout(tx, rollout.id, [from], paused ? { status: 'paused' } : { status: 'running', stepStartedAt: at }, at);
    if (next === undefined) return undefined;
    await record(tx, next, { kind: paused ? 'paused' : 'resumed', message: paused ? 'paused: traffic held and no automatic step; a degrading canary is still rolled back' : 'resumed: the step is monitored again from now', details: {} }, at);
    return next;
  });
  if (moved === undefined) throw new QuiverError(ErrorCodes.conflict, `the rollout is not ${from}`, { details: { rolloutId: rollout.id, status: rollout.status } });
  await context.changed();
  return moved;
}
