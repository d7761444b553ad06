/**
 * @module composition/after-install
 * What the app does in the background after a committed install, update or sync of a plugin:
 * queue its verification and regenerate its intelligence document. Both are started from a
 * plugin-change event and not awaited by the command that changed the plugin, so each keeps what
 * is under way and `settle` waits for it: the app awaits that before closing what the work uses,
 * so a command that installs or syncs and exits (`quiver plugin add`, `quiver plugin update`)
 * finishes the work instead of warning that the database closed under it.
 */
import type { QuiverConfig } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import type { PluginChangeEvent } from '../plugins/service/types.ts';
import type { PidGenerationService } from '../intelligence/index.ts';
import type { VerificationService } from '../verification/service/index.ts';

/** A plugin-change reaction whose background work the app can wait for before it closes. */
export interface InstallReaction {
  onChange(event: PluginChangeEvent): void;
  settle(): Promise<void>;
}

/**
 * The plugin is verified in the background (issue #10) when `QUIVER_VERIFY_ON_INSTALL=background`:
 * a verification job goes on the durable queue, which a running server works through.
 */
export function verifyAfterInstall(input: { config: QuiverConfig; logger: Logger; verification: Pick<VerificationService, 'enqueueAfterInstall'> }): InstallReaction {
  const work = trackedWork();
  return {
    onChange(event) {
      if (event.kind !== 'installation' || event.pluginId === undefined || input.config.verification.onInstall !== 'background') return;
      const pluginId = event.pluginId;
      work.track(input.verification.enqueueAfterInstall(pluginId).then(
        () => undefined,
        (error: unknown) => input.logger.warn({ err: error, pluginId }, 'queueing a verification failed'),
      ));
    },
    settle: work.settle,
  };
}

/** An already generated intelligence document is regenerated (issue #14); the previous one stays when that fails. */
export function regenerateIntelligence(input: { logger: Logger; pidGeneration: Pick<PidGenerationService, 'refresh'> }): InstallReaction {
  const work = trackedWork();
  return {
    onChange(event) {
      if (event.kind !== 'installation' || event.pluginId === undefined) return;
      const pluginId = event.pluginId;
      work.track(input.pidGeneration.refresh(pluginId).then(
        () => undefined,
        (error: unknown) => input.logger.warn({ err: error, pluginId }, 'regenerating the intelligence document failed; the previous one stays'),
      ));
    },
    settle: work.settle,
  };
}

/** Promises under way (each already handles its own failure); `settle` returns once none is left, including any started meanwhile. */
function trackedWork(): { track(work: Promise<void>): void; settle(): Promise<void> } {
  const underWay = new Set<Promise<void>>();
  return {
    track(work) {
      underWay.add(work);
      void work.finally(() => underWay.delete(work));
    },
    async settle() {
      while (underWay.size > 0) await Promise.all(underWay);
    },
  };
}
