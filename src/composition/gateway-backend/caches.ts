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
  /** Hits and misses of each cache since start, and entries held (the `/metrics` cache figures). */
  stats(): Record<'launchSpecs' | 'pluginList', { hits: number; misses: number; size: number }>;
}

/** Creates the spec and plugin-list caches over the plugin service. */
export function createBackendCaches(service: Pick<PluginService, 'list' | 'upstreamSpec'>, ttlMs: number, now: () => number): BackendCaches {
  const specs = new Map<string, Timed<Promise<UpstreamSpec>>>();
  let pluginList: Timed<Promise<Map<string, PublicPlugin>>> | undefined;
  const counts = { launchSpecs: { hits: 0, misses: 0 }, pluginList: { hits: 0, misses: 0 } };
  return {
    async specFor(pluginName) {
      const cached = specs.get(pluginName);
      if (cached && now() - cached.at <= ttlMs) {
        counts.launchSpecs.hits += 1;
        return cached.value;
      }
      counts.launchSpecs.misses += 1;
      const loading = service.upstreamSpec(pluginName);
      loading.catch(() => specs.delete(pluginName));
      specs.set(pluginName, { value: loading, at: now() });
      return loading;
    },
    async plugins() {
      if (pluginList && now() - pluginList.at <= ttlMs) counts.pluginList.hits += 1;
      else {
        counts.pluginList.misses += 1;
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
    stats: () => ({
      launchSpecs: { ...counts.launchSpecs, size: specs.size },
      pluginList: { ...counts.pluginList, size: pluginList ? 1 : 0 },
    }),
  };
}
