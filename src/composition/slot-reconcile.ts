/**
 * @module composition/slot-reconcile
 * Removal and `plugin update` keep the blue-green slots true (issue #29): the plugin service the
 * app exposes (CLI, API, UI) tells the rollout service after each, so a removed plugin's slots,
 * rollouts and history go at once and an updated plugin's active slot says what is installed
 * (an open rollout it invalidated is rolled back). The folders they used are then unused and the
 * folder sweep deletes them. The rollout service itself is built on the plain plugin service, so
 * nothing here is circular. The sweep reconciles too, for changes made by another process.
 */
import type { Logger } from '../core/logger.ts';
import type { PluginService } from '../plugins/service.ts';
import type { RolloutService } from '../rollouts/index.ts';

/** The plugin service whose `remove` and `update` also reconcile the plugin's slots. */
export function withSlotReconcile(plugins: PluginService, rollouts: Pick<RolloutService, 'pluginChanged'>, logger: Logger): PluginService {
  const reconcile = async (pluginId: string) => {
    try {
      const changes = await rollouts.pluginChanged(pluginId);
      if (changes.length > 0) logger.info({ pluginId, changes }, 'rollouts: slots reconciled with the plugin');
    } catch (error) {
      // The removal or update itself succeeded; the next sweep reconciles again.
      logger.warn({ err: error, pluginId }, 'rollouts: could not reconcile the slots; the next folder sweep will');
    }
  };
  return Object.freeze({
    ...plugins,
    async remove(reference: string) {
      const { plugin } = await plugins.show(reference);
      await plugins.remove(reference);
      await reconcile(plugin.id);
    },
    async update(reference: string, options?: Parameters<PluginService['update']>[1]) {
      const report = await plugins.update(reference, options);
      await reconcile(report.plugin.id);
      return report;
    },
  });
}
