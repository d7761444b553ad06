/**
 * @module composition/gateway-backend/exposure-modes
 * The exposure mode each workspace sets for its sessions (seed 002 tiers; a connection's
 * own flag wins in the gateway). Reloaded on every catalog change; a failed reload keeps
 * the modes already known, since the mode decides relevance, not access.
 */
import type { Logger } from '../../core/logger.ts';
import type { PluginService } from '../../plugins/service.ts';
import { EXPOSURE_MODES, type ExposureMode, type SessionIdentity } from '../../gateway/backend.ts';

/** Per-workspace exposure modes. */
export interface ExposureModes {
  /** The mode the identity's workspace sets, or undefined when it sets none (or an unknown one). */
  modeFor(identity: SessionIdentity): ExposureMode | undefined;
  /** Whether the identity's workspace shows plugins' own names (issue #12). */
  nativeNamesFor(identity: SessionIdentity): boolean;
  /** Reloads the modes; never throws. */
  refresh(): Promise<void>;
}

/** Creates the per-workspace exposure modes (empty until the first refresh). */
export function createExposureModes(
  service: Pick<PluginService, 'workspaceExposureModes'> & Partial<Pick<PluginService, 'workspaceNativeNames'>>,
  logger: Logger,
): ExposureModes {
  let modes = new Map<string, string>();
  let nativeNames = new Set<string>();
  return {
    modeFor(identity) {
      const mode = modes.get(identity.workspace);
      return (EXPOSURE_MODES as readonly string[]).includes(mode ?? '') ? (mode as ExposureMode) : undefined;
    },
    nativeNamesFor: (identity) => nativeNames.has(identity.workspace),
    async refresh() {
      try {
        const [loadedModes, loadedNames] = await Promise.all([service.workspaceExposureModes(), service.workspaceNativeNames?.() ?? new Set<string>()]);
        modes = loadedModes;
        nativeNames = loadedNames;
      } catch (error) {
        // Relevance, not security: keep the modes we had.
        logger.warn({ err: error }, 'gateway: could not load workspace exposure modes');
      }
    },
  };
}
