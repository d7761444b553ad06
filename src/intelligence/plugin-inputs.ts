/**
 * @module intelligence/plugin-inputs
 * What generation reads of an installed plugin (issue #14): its discovery (the catalog's copy
 * of `tools/list`), its code folder (none for a remote or sync-registered plugin), and what its
 * author wrote — the shipped or admin-written PID (never one Quiver generated: that would feed
 * generation its own output) and the manifest.
 */
import { isQuiverError } from '../core/errors.ts';
import type { PluginService } from '../plugins/service.ts';
import { codeDirOf } from '../verification/subject.ts';
import type { GenerationInputs, JsonObject } from './types.ts';

/** The plugins service methods generation reads through. */
export type PluginReader = Pick<PluginService, 'show' | 'tools' | 'getIntelligence' | 'intelligenceStored'>;

/** The current PID of a plugin, or undefined when it has none. */
export async function currentPid(plugins: PluginReader, name: string): Promise<{ pid: JsonObject; origin: string; hash: string } | undefined> {
  try {
    const current = await plugins.getIntelligence(name);
    return { pid: current.pid, origin: current.origin, hash: current.contentHash.trim() };
  } catch (error) {
    if (isQuiverError(error, 'not_found')) return undefined;
    throw error;
  }
}

/** The generation inputs of an installed plugin, with its id and name. */
export async function pluginInputs(plugins: PluginReader, reference: string): Promise<{ inputs: GenerationInputs; pluginId: string; name: string }> {
  const { plugin } = await plugins.show(reference);
  const discovered = await plugins.tools(plugin.name);
  const current = await currentPid(plugins, plugin.name);
  const pid = current !== undefined && current.origin !== 'generated' ? current.pid : undefined;
  const codeDir = plugin.sourceType === 'url' || plugin.sourceType === 'sync' ? null : codeDirOf(plugin.source);
  return {
    pluginId: plugin.id,
    name: plugin.name,
    inputs: { pluginName: plugin.name, codeDir, discovered, author: { pid, manifest: plugin.manifest ?? undefined }, description: plugin.description },
  };
}
