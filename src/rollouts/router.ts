/**
 * @module rollouts/router
 * The hot-path half of rollouts: which spec serves a call. It holds, per plugin name, what the
 * open rollout says (canary percent of the step, the tools the canary may serve, its staged
 * install) and answers synchronously, without the database. `load()` replaces the table from
 * the database; it runs at start, after every transition this replica makes, on every rollout
 * notification from another replica, and after decider ticks as a safety net (every tick while
 * a rollout is open, every tenth while none is), so all replicas route alike within one notification.
 */
import type { Logger } from '../core/logger.ts';
import type { UpstreamSpec } from '../runtime/types.ts';
import type { Queryable } from '../store/database.ts';
import { deploymentsOf, openRollouts } from './repository.ts';
import { routesTargetToCanary, type RouteState, type SlotTarget } from './routing.ts';
import { canarySpec } from './slot-spec.ts';
import type { Deployment } from './types.ts';

interface PluginRoute extends RouteState {
  canary: Deployment;
}

/** The slot router. */
export interface SlotRouter {
  /** The spec that serves this request: the canary's for sessions in its share (targets it serves unchanged), else `stable` itself. */
  route(pluginName: string, stable: UpstreamSpec, sessionKey: string, target: SlotTarget): UpstreamSpec;
  /** Reloads the open rollouts from the database. */
  load(): Promise<void>;
  /** Plugin names with an open rollout (for tests and status). */
  routed(): string[];
  /** Open rollouts at the last load, routable or not (the monitor idles while there are none). */
  openCount(): number;
}

/** Creates the router; nothing is routed before the first `load()`. */
export function createSlotRouter(options: { db: Queryable; pluginNameOf: (pluginId: string) => Promise<string | undefined>; stateRoot: string | undefined; logger: Logger }): SlotRouter {
  let table = new Map<string, PluginRoute>();
  // Derived specs are reused while the stable spec object (the gateway's cached one) is the same.
  let derived = new WeakMap<UpstreamSpec, { rolloutId: string; spec: UpstreamSpec }>();
  let loading: Promise<void> | undefined;
  let open = 0;

  async function readTable(): Promise<{ routes: Map<string, PluginRoute>; open: number }> {
    const next = new Map<string, PluginRoute>();
    const rollouts = await openRollouts(options.db);
    for (const rollout of rollouts) {
      const canary = (await deploymentsOf(options.db, rollout.pluginId)).find((deployment) => deployment.id === rollout.toDeployment);
      const name = await options.pluginNameOf(rollout.pluginId);
      if (canary === undefined || canary.install === null || name === undefined) continue;
      const surface = canary.routableSurface;
      next.set(name, {
        rolloutId: rollout.id,
        pluginId: rollout.pluginId,
        canaryPercent: canary.trafficPercent,
        canaryTools: new Set(canary.routableTools),
        canaryResources: new Set(surface.resources),
        canaryTemplates: surface.templates,
        canaryPrompts: new Set(surface.prompts),
        canary,
      });
    }
    return { routes: next, open: rollouts.length };
  }

  return {
    route(pluginName, stable, sessionKey, target) {
      const route = table.get(pluginName);
      if (route === undefined || !routesTargetToCanary(route, sessionKey, target)) return stable;
      const cached = derived.get(stable);
      if (cached !== undefined && cached.rolloutId === route.rolloutId) return cached.spec;
      try {
        const spec = canarySpec(stable, route.canary.install!, route.canary.slot, route.canary.runtimeVersion, options.stateRoot);
        derived.set(stable, { rolloutId: route.rolloutId, spec });
        return spec;
      } catch (error) {
        // Fail open on routing: the stable slot always works.
        options.logger.warn({ err: error, plugin: pluginName }, 'rollouts: cannot build the canary spec; serving the stable slot');
        return stable;
      }
    },
    load() {
      // Loads run one at a time; a load asked for while one runs follows it (it may have missed a change).
      const run = (loading ?? Promise.resolve()).then(async () => {
        const read = await readTable();
        table = read.routes;
        open = read.open;
        derived = new WeakMap();
      });
      loading = run.catch((error) => options.logger.warn({ err: error }, 'rollouts: could not load the routing table'));
      return run;
    },
    routed: () => [...table.keys()],
    openCount: () => open,
  };
}
