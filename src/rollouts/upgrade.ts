/**
 * @module rollouts/upgrade
 * `quiver plugin upgrade NAME [--ref R | --version V]`: the new version is fetched, built and
 * discovered into its own folder (as for a new plugin, plugins/service/versions.ts), written
 * into the idle slot as the canary, and a rollout starts at the first step. The catalog is not
 * touched until promotion: sessions keep the active version's tool list, and only tools the
 * canary serves exactly as the active slot does are routed to it.
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import type { PluginRecord } from '../store/repositories/plugins.ts';
import { isUniqueViolation } from '../store/repositories/mapping.ts';
import type { StagedVersion } from '../plugins/service.ts';
import { deploymentsOf, insertRollout, insertRolloutEvent, openRolloutOf, setDeploymentState, setRoutableSurface, upsertDeployment } from './repository.ts';
import { cacheFolderOf } from './folder-usage.ts';
import { reconcilePlugin } from './reconcile.ts';
import { routableSurface } from './surface.ts';
import { requireInstalledPlugin, type RolloutContext } from './context.ts';
import { canaryRuntimeVersion, canarySpec } from './slot-spec.ts';
import type { Deployment, RoutableSurface, Rollout, Slot } from './types.ts';
import { queueVerification } from './verify.ts';

/** What `upgrade` asks for. */
export interface UpgradeRequest {
  ref?: string | undefined;
  version?: string | undefined;
}

function definitionKey(tool: { name: string; description?: string | undefined; inputSchema?: unknown; outputSchema?: unknown; annotations?: unknown }): string {
  return JSON.stringify([tool.name, tool.description ?? null, tool.inputSchema ?? null, tool.outputSchema ?? null, tool.annotations ?? null]);
}

/** Tools the canary serves exactly as the active version does (only these are routed to it). */
async function routableTools(context: RolloutContext, record: PluginRecord, staged: StagedVersion): Promise<string[]> {
  const stable = await context.plugins.upstreamSpec(record.name);
  const served = new Set((await context.supervisor.listTools(stable)).map((tool) => definitionKey(tool)));
  return staged.served.filter((tool) => served.has(definitionKey(tool))).map((tool) => tool.name);
}

/** The active slot, written on the first upgrade from what is installed now. */
async function activeSlot(context: RolloutContext, record: PluginRecord, slots: Deployment[]): Promise<Deployment> {
  const active = slots.find((deployment) => deployment.status === 'active');
  if (active !== undefined) return active;
  const version = record.version ?? 'local';
  const source = record.source;
  const ref = typeof source['commit'] === 'string' ? source['commit'] : typeof source['ref'] === 'string' ? source['ref'] : null;
  return upsertDeployment(
    context.db,
    // Its folder is recorded now (issue #29): once a promotion moves the plugin row on, nothing else names it.
    { pluginId: record.id, slot: 'blue', version, status: 'active', trafficPercent: 100, runtimeVersion: version, executionMode: record.trustLevel ?? null, requestedRef: ref, install: null, routableTools: [], folder: cacheFolderOf(record.source) },
    context.now(),
  );
}

/** Stages the new version into the idle slot and starts its rollout. */
export async function startUpgrade(context: RolloutContext, reference: string, request: UpgradeRequest): Promise<{ rollout: Rollout; canary: Deployment; warnings: string[] }> {
  if (request.ref !== undefined && request.version !== undefined) throw new QuiverError(ErrorCodes.invalidInput, 'give --ref or --version, not both');
  const record = await requireInstalledPlugin(context, reference);
  if (await openRolloutOf(context.db, record.id)) {
    throw new QuiverError(ErrorCodes.conflict, `plugin '${record.name}' already has a rollout in progress; see 'quiver plugin rollout status ${record.name}'`);
  }
  if (record.sourceType !== 'git' && record.sourceType !== 'npm' && record.sourceType !== 'path' && record.sourceType !== 'pypi') {
    throw new QuiverError(ErrorCodes.invalidInput, `plugin '${record.name}' comes from a ${record.sourceType} source: blue-green upgrades cover plugins installed from git, npm or a folder; use 'quiver plugin update ${record.name}'`);
  }
  // A plugin updated outside a rollout since the last one: its active slot first says what is installed.
  await reconcilePlugin(context, record.id);
  const slots = await deploymentsOf(context.db, record.id);
  const active = await activeSlot(context, record, slots);
  const slot: Slot = active.slot === 'blue' ? 'green' : 'blue';
  const outgoing = slots.find((deployment) => deployment.slot === slot);
  context.logger.info({ plugin: record.name, slot, ref: request.ref, version: request.version }, 'rollout: staging the new version');
  const staged = await context.plugins.stageVersion(record.name, request);
  const version = staged.fields.version ?? 'local';
  const routable = await routableTools(context, record, staged);
  // With verification on, the rollout waits in `verifying` (0 % to the canary) until the verdict,
  // and the new version runs with the slot's privileges only once it passed (rollouts/verify.ts).
  const verifying = context.verifyStaged !== undefined;
  // Started before it takes traffic: its first calls must not pay the process start (the judge
  // compares latencies), and a version that cannot start fails here, before any session sees it.
  let surface: RoutableSurface | undefined;
  if (!verifying) {
    const stable = await context.plugins.upstreamSpec(record.name);
    const launch = canarySpec(stable, staged, slot, canaryRuntimeVersion(version, slot), context.stateRoot);
    await context.supervisor.listTools(launch);
    surface = await routableSurface(context.supervisor, stable, launch);
  }
  const folder = cacheFolderOf(staged);
  const percent = verifying ? 0 : context.settings.steps[0]!;
  const at = context.now();
  try {
    const result = await context.db.transaction(async (tx) => {
      const canary = await upsertDeployment(
        tx,
        {
          pluginId: record.id,
          slot,
          version,
          status: 'canary',
          trafficPercent: percent,
          runtimeVersion: canaryRuntimeVersion(version, slot),
          executionMode: record.trustLevel ?? null,
          requestedRef: request.ref ?? request.version ?? null,
          install: staged,
          routableTools: routable,
          folder,
        },
        at,
      );
      if (surface !== undefined) await setRoutableSurface(tx, canary.id, surface);
      const rollout = await insertRollout(
        tx,
        { pluginId: record.id, from: active.id, to: canary.id, steps: context.settings.steps, stepWindowMs: context.settings.stepWindowMs, status: verifying ? 'verifying' : 'running' },
        at,
      );
      await setDeploymentState(tx, active.id, 'active', 100 - percent, at);
      const held = staged.served.length - routable.length;
      await insertRolloutEvent(
        tx,
        {
          rolloutId: rollout.id,
          pluginId: record.id,
          kind: 'started',
          message: `${active.version} → ${version} in the ${slot} slot: ${verifying ? 'verifying it before it takes traffic' : `${percent} % of traffic; not verified (verification on install is off)`}${held > 0 ? `; ${held} new or changed tool(s) wait for promotion` : ''}`,
          details: { from: active.version, to: version, slot, percent, routableTools: routable, verification: verifying ? 'pending' : 'off', folders: { active: active.folder, canary: folder } },
        },
        at,
      );
      // The slot's previous version (idle or failed) is overwritten: its folder is accounted for in the history (issue #29).
      if (outgoing !== undefined && outgoing.folder !== null && outgoing.folder !== folder) {
        await insertRolloutEvent(
          tx,
          {
            rolloutId: rollout.id,
            pluginId: record.id,
            kind: 'folder',
            message: `${outgoing.version} (${outgoing.status}) left the ${slot} slot; its folder ${outgoing.folder} is released`,
            details: { action: 'released', folder: outgoing.folder, labels: [outgoing.runtimeVersion, outgoing.version], version: outgoing.version, slot, status: outgoing.status },
          },
          // Just before `started`: the history reads in order (the old version left, then the new one came).
          new Date(at.getTime() - 1),
        );
      }
      return { rollout, canary };
    });
    await context.changed();
    if (verifying) await queueVerification(context, result.rollout);
    return { ...result, warnings: staged.warnings };
  } catch (error) {
    if (isUniqueViolation(error)) throw new QuiverError(ErrorCodes.conflict, `plugin '${record.name}' already has a rollout in progress`, { cause: error });
    throw error;
  }
}
