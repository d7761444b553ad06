/**
 * @module runtime/supervisor/retire
 * Retiring one version of a plugin (issue #11, blue-green slots): after a rollout promotes a new
 * version or rolls one back, the processes of the version that no longer takes traffic stop as
 * soon as they have nothing in flight, instead of lingering until their idle timeout. Calls in
 * flight finish on the process they started on; a later call for that version starts a new one.
 */
import type { InstanceLifecycle } from './lifecycle.ts';
import type { EntryRegistry } from './registry.ts';
import { inUse } from './state.ts';

/** Creates `retireVersion(pluginId, version)`; it returns how many connections it retired. */
export function createVersionRetirement(deps: { registry: Pick<EntryRegistry, 'forPlugin'>; lifecycle: Pick<InstanceLifecycle, 'stop'> }): (pluginId: string, version: string) => number {
  return (pluginId, version) => {
    let retired = 0;
    for (const entry of deps.registry.forPlugin(pluginId)) {
      if (entry.spec.version !== version) continue;
      for (const instance of [...entry.instances]) {
        if (instance.state === 'stopping') continue;
        // The pool skips retired instances; scheduleIdle stops a busy one after its last request.
        instance.retire = true;
        retired += 1;
        if (!inUse(instance)) void deps.lifecycle.stop(instance, 'version retired');
      }
    }
    return retired;
  };
}
