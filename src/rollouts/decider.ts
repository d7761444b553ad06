/**
 * @module rollouts/decider
 * The monitor of running rollouts (seed 000 §5.1: "monitor health metrics for 5 minutes,
 * increase to 50 % if healthy, complete cutover if metrics hold, roll back automatically if
 * health degrades"). Every server runs it on a timer; for each running rollout it first takes
 * the rollout's decider lease (repository `claimDecider`), so exactly one replica judges and
 * moves it while every replica routes by the shared state. A lease that runs out (its replica
 * died) is taken over on the next tick; state and step start are in the database, so a
 * restarted Quiver resumes the step where it was.
 */
import { findPluginRecordById } from '../store/repositories/plugins.ts';
import { judge, type Verdict } from './judge.ts';
import { claimDecider, deploymentsOf, openRollouts, setDeploymentHealth, slotStats } from './repository.ts';
import type { RolloutContext } from './context.ts';
import { advanceStep, promote, rollBack } from './transitions.ts';
import { rejectFailedVerifications } from './verify.ts';
import type { Rollout, SlotStats } from './types.ts';

/** What one look at a rollout found and did. */
export interface Decision {
  rolloutId: string;
  action: 'none' | 'step' | 'promoted' | 'rolled_back';
  verdict: Verdict;
  canary: SlotStats;
  stable: SlotStats;
}

/** Both slots' calls since the step started. */
export async function stepHealth(context: RolloutContext, rollout: Rollout): Promise<{ canary: SlotStats; stable: SlotStats; verdict: Verdict } | undefined> {
  const slots = await deploymentsOf(context.db, rollout.pluginId);
  const canarySlot = slots.find((slot) => slot.id === rollout.toDeployment);
  const stableSlot = slots.find((slot) => slot.id === rollout.fromDeployment);
  if (canarySlot === undefined || stableSlot === undefined) return undefined;
  const [canary, stable] = await Promise.all([
    slotStats(context.db, rollout.pluginId, canarySlot.runtimeVersion, rollout.stepStartedAt),
    slotStats(context.db, rollout.pluginId, stableSlot.runtimeVersion, rollout.stepStartedAt),
  ]);
  return { canary, stable, verdict: judge(canary, stable, context.settings) };
}

/**
 * Judges one running or paused rollout (the caller holds its lease) and moves it when it is
 * time. A paused rollout is judged too: a pause stops advancing, not protecting, so a canary
 * that degrades while paused is rolled back like a running one, but it never steps or promotes.
 */
export async function decide(context: RolloutContext, rollout: Rollout): Promise<Decision | undefined> {
  const record = await findPluginRecordById(context.db, rollout.pluginId);
  const health = await stepHealth(context, rollout);
  if (record === undefined || health === undefined) return undefined;
  const { canary, stable, verdict } = health;
  await setDeploymentHealth(context.db, rollout.toDeployment, verdict.canaryScore);
  await setDeploymentHealth(context.db, rollout.fromDeployment, verdict.stableScore);
  const details = { canary, stable, canaryScore: verdict.canaryScore, stableScore: verdict.stableScore };
  if (verdict.verdict === 'degraded') {
    await rollBack(context, rollout, record.name, 'automatic', verdict.reasons.join('; '), details);
    return { rolloutId: rollout.id, action: 'rolled_back', verdict, canary, stable };
  }
  if (rollout.status === 'paused') return { rolloutId: rollout.id, action: 'none', verdict, canary, stable };
  const elapsed = context.now().getTime() - rollout.stepStartedAt.getTime();
  // A step ends after its window once the canary has been judged healthy, or, with `stepCalls`
  // set, once the healthy canary has answered that many calls (the evidence a step rests on, not
  // the time it took: a slow machine or a quiet hour gives fewer calls per window); a canary too
  // quiet to judge gets a second window, then moves on (a plugin nobody calls must still be upgradable).
  const stepCalls = context.settings.stepCalls;
  const healthyDone = stepCalls > 0 ? canary.calls >= stepCalls : elapsed >= rollout.stepWindowMs;
  const due = verdict.verdict === 'healthy' ? healthyDone : elapsed >= 2 * rollout.stepWindowMs;
  if (!due) return { rolloutId: rollout.id, action: 'none', verdict, canary, stable };
  const next = rollout.step + 1;
  if (next >= rollout.steps.length - 1 || rollout.steps[next]! >= 100) {
    await promote(context, rollout, record.name, 'automatic', details);
    return { rolloutId: rollout.id, action: 'promoted', verdict, canary, stable };
  }
  await advanceStep(context, rollout, details);
  return { rolloutId: rollout.id, action: 'step', verdict, canary, stable };
}

/** One tick: every running or paused rollout this replica can lease is judged. Errors are logged per rollout. */
export async function tick(context: RolloutContext, owner: string, leaseMs: number): Promise<Decision[]> {
  const open = await openRollouts(context.db);
  const verifying = open.filter((rollout) => rollout.status === 'verifying');
  if (verifying.length > 0) await rejectFailedVerifications(context, verifying).catch((error) => context.logger.warn({ err: error }, 'rollouts: could not check verification jobs'));
  const running = open.filter((rollout) => rollout.status === 'running' || rollout.status === 'paused');
  if (running.length === 0) return [];
  await context.flushCallEvents();
  const decisions: Decision[] = [];
  for (const rollout of running) {
    try {
      if (!(await claimDecider(context.db, rollout.id, owner, leaseMs))) continue;
      const decision = await decide(context, rollout);
      if (decision !== undefined) decisions.push(decision);
    } catch (error) {
      context.logger.warn({ err: error, rolloutId: rollout.id }, 'rollouts: a decision failed; retried on the next tick');
    }
  }
  return decisions;
}
