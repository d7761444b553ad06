/**
 * @module composition/gateway-backend
 * The production `GatewayBackend`: the MCP gateway's one seam, implemented over the
 * selection engine (visibility and ranking), the plugin service (launch specs, manifests,
 * marketplace) and the runtime supervisor (calls, resources, prompts). Part of the app
 * layer: it only wires services, it decides nothing the services already decide.
 *
 * Visibility is the selection engine's `visibleTools` (policy, enablement, organisation;
 * fail closed). Silent plugins are middleware-only: never listed, searched or callable.
 *
 * This module assembles the parts in `./gateway-backend/`: caches (launch specs and plugin
 * metadata), exposure modes, visibility, tools (search, list, call), capabilities,
 * passthrough (resources and prompts), surface (resource templates, completion and resource
 * subscriptions), tasks and catalog changes, which clear the caches.
 */
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import type { SelectionEngine } from '../selection/index.ts';
import type { PluginService } from '../plugins/service.ts';
import type { Supervisor } from '../runtime/index.ts';
import type { PinningService } from '../trust/pinning/index.ts';
import type { RolloutService } from '../rollouts/index.ts';
import type { ExposureMode, GatewayBackend, SessionIdentity } from '../gateway/backend.ts';
import { createBackendCaches } from './gateway-backend/caches.ts';
import { createCapabilityMethods } from './gateway-backend/capabilities.ts';
import { createCatalogChanges } from './gateway-backend/catalog-changes.ts';
import { createExposureModes } from './gateway-backend/exposure-modes.ts';
import { createPassthroughMethods } from './gateway-backend/passthrough.ts';
import { createSurfaceMethods } from './gateway-backend/surface-methods.ts';
import { createTaskMethods } from './gateway-backend/task-methods.ts';
import { createToolMethods } from './gateway-backend/tools.ts';
import { createRemoteOwnership } from './gateway-backend/remote-owner.ts';
import type { RemoteOAuth } from '../plugins/oauth/remote-oauth.ts';
import { createPinGuard } from './gateway-backend/pin-guard.ts';
import { createSessionVisibility } from './gateway-backend/visibility.ts';

/** What the backend is built from. */
export interface GatewayBackendDeps {
  db: Database;
  selection: SelectionEngine;
  plugins: PluginService;
  supervisor: Supervisor;
  /** Blue-green slots (issue #11): which slot's spec serves a call during a rollout. */
  slots?: Pick<RolloutService, 'route' | 'routeTarget'> | undefined;
  /** Tool pinning (issue #10): quarantined tools are refused with the reason; a restarted plugin's tools are screened before a call. */
  pinning?: Pick<PinningService, 'quarantineOf' | 'screenServed'> | undefined;
  logger?: Logger;
  /** Issue #27: whose authorization a remote plugin's requests carry (per user or organisation when the admin says so). */
  remoteOAuth?: Pick<RemoteOAuth, 'ownerKind' | 'accessToken'> | undefined;
  /** How long launch specs and plugin metadata are reused (ms, default 10 s); changes clear them at once. */
  cacheTtlMs?: number;
  now?: () => number;
}

/** Builds the production backend. */
export function createGatewayBackend(deps: GatewayBackendDeps): GatewayBackend & {
  /** The exposure mode a workspace sets for its sessions (seed 002 tiers; per-connection flags win). */
  exposureModeFor(identity: SessionIdentity): ExposureMode | undefined;
  /** Whether a workspace shows plugins' own names (issue #12); reloaded with the exposure modes. */
  nativeNamesFor(identity: SessionIdentity): boolean;
  /** Reloads the per-workspace exposure modes (also done on every catalog change). */
  refreshExposureModes(): Promise<void>;
  /** Hit and miss totals of the launch-spec and plugin-list caches (issue #16 metrics). */
  cacheStats(): Record<string, { hits: number; misses: number; size: number }>;
  close(): Promise<void>;
} {
  const logger = deps.logger ?? silentLogger;
  const caches = createBackendCaches(deps.plugins, deps.cacheTtlMs ?? 10_000, deps.now ?? Date.now);
  const exposureModes = createExposureModes(deps.plugins, logger);
  const visibility = createSessionVisibility(deps.selection);
  const catalogChanges = createCatalogChanges(
    deps.db,
    () => {
      caches.clear();
      void exposureModes.refresh();
    },
    logger,
  );

  const owned = deps.remoteOAuth === undefined ? undefined : createRemoteOwnership(deps.remoteOAuth);
  const pinGuard = deps.pinning === undefined ? undefined : createPinGuard({ supervisor: deps.supervisor, pinning: deps.pinning });

  return {
    exposureModeFor: (identity) => exposureModes.modeFor(identity),
    nativeNamesFor: (identity) => exposureModes.nativeNamesFor(identity),
    refreshExposureModes: () => exposureModes.refresh(),
    cacheStats: () => caches.stats(),
    ...createToolMethods({
      selection: deps.selection,
      supervisor: deps.supervisor,
      visibility,
      caches,
      slots: deps.slots,
      pinning: deps.pinning,
      pinGuard,
      owned,
    }),
    ...createCapabilityMethods({ plugins: deps.plugins, visibility, caches }),
    ...createPassthroughMethods({ supervisor: deps.supervisor, visibility, caches, slots: deps.slots, owned }),
    ...createSurfaceMethods({ supervisor: deps.supervisor, visibility, caches, slots: deps.slots, owned }),
    ...createTaskMethods({ supervisor: deps.supervisor, visibility, caches, pinGuard, owned }),

    async recordOutcome(eventId, outcome) {
      // Queued and written in batches (issue #18): the gateway reports one after every search,
      // so a transaction each would put the database on the search path. It is feedback:
      // the engine logs a failure, never throws it into the session.
      deps.selection.queueOutcome(eventId, outcome);
    },

    async recordCall(session, record) {
      logger.debug({ session: session.sessionId, ...record }, 'gateway call');
    },

    onCatalogChanged: (listener) => catalogChanges.onCatalogChanged(listener),
    close: () => catalogChanges.close(),
  };
}
