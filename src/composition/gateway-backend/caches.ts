/**
 * @module composition/gateway-backend/caches
 * The backend's reuse of launch specs and plugin metadata: each loaded at most once per
 * TTL (a failed load is forgotten at once, so the next asks again) and both cleared
 * together when the catalog changes.
 */
import type { PluginService, PublicPlugin } from '../../plugins/service.ts';
import type { UpstreamSpec } from '../../runtime/index.ts';

interface Timed<T> {
  value: T;
  at: number;
}

/** Cached reads of the plugin service. */
export interface BackendCaches {
  /** A plugin's launch spec. */
  specFor(pluginName: string): Promise<UpstreamSpec>;
  /** Every installed plugin, by name. */
  plugins(): Promise<Map<string, PublicPlugin>>;
  /** Forgets everything (a catalog change). */
  clear(): void;
}

/** Creates the spec and plugin-list caches over the plugin service. */
export function createBackendCaches(service: Pick<PluginService, 'list' | 'upstreamSpec'>, ttlMs: number, now: () => number): BackendCaches {
  const specs = new Map<string, Timed<Promise<UpstreamSpec>>>();
  let pluginList: Timed<Promise<Map<string, PublicPlugin>>> | undefined;
  return {
    async specFor(pluginName) {
      const cached = specs.get(pluginName);
      if (cached && now() - cached.at <= ttlMs) return cached.value;
      const loading = service.upstreamSpec(pluginName);
      loading.catch(() => specs.delete(pluginName));
      specs.set(pluginName, { value: loading, at: now() });
      return loading;
    },
    async plugins() {
      if (!pluginList || now() - pluginList.at > ttlMs) {
        const loading = service.list().then((list) => new Map(list.map((p) => [p.name, p])));
        loading.catch(() => {
          if (pluginList?.value === loading) pluginList = undefined;
        });
        pluginList = { value: loading, at: now() };
      }
      return pluginList.value;
    },
    clear() {
      specs.clear();
      pluginList = undefined;
    },
  };
}
