/**
 * @module composition/gateway-backend/capabilities
 * Plugins as the gateway describes them: capabilities from each visible plugin's manifest
 * (seed 002: title, summary, when to use, tags, category, stability), a plugin's tools for
 * `load_capability`, the catalog overview a session opens with, and installable marketplace
 * plugins for a search that found too little.
 */
import type { CapabilitySummary, GatewayBackend, Visibility } from '../../gateway/backend.ts';
import type { PluginService, PublicPlugin } from '../../plugins/service.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import type { BackendCaches } from './caches.ts';
import type { SessionVisibility } from './visibility.ts';

const asStrings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const asText = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/** A plugin's capability summary from its manifest, falling back to its catalog fields. */
export function capabilityOf(plugin: PublicPlugin | undefined, name: string, tools: readonly SelectionCandidate[]): CapabilitySummary {
  const manifest = (plugin?.manifest ?? {}) as Record<string, unknown>;
  const category = asText(manifest['category']);
  const stability = asText(manifest['stability']);
  return {
    name,
    title: asText(manifest['title']) ?? plugin?.displayName ?? name,
    summary: asText(manifest['summary']) ?? plugin?.description ?? '',
    whenToUse: asStrings(manifest['whenToUse']),
    whenNotToUse: asStrings(manifest['whenNotToUse']),
    tags: asStrings(manifest['tags']),
    ...(category ? { category } : {}),
    ...(stability === 'stable' || stability === 'beta' || stability === 'experimental' ? { stability } : {}),
    visibility: (plugin?.visibility ?? 'on-demand') as Visibility,
    toolCount: tools.length,
  };
}

/** What the capability methods are built from. */
export interface CapabilityMethodsDeps {
  plugins: Pick<PluginService, 'searchMarketplace'>;
  visibility: SessionVisibility;
  caches: Pick<BackendCaches, 'plugins'>;
}

/** Creates `listCapabilities`, `capabilityTools`, `catalogOverview` and `suggestMarketplace`. */
export function createCapabilityMethods(
  deps: CapabilityMethodsDeps,
): Pick<GatewayBackend, 'listCapabilities' | 'capabilityTools' | 'catalogOverview' | 'suggestMarketplace'> {
  const { visibility, caches } = deps;
  return {
    async listCapabilities(session, options = {}) {
      const known = await caches.plugins();
      const { offered } = options;
      const capabilities: CapabilitySummary[] = [];
      for (const [name, tools] of await visibility.visiblePlugins(session)) {
        // Issue #24: count what this caller may be offered; a plugin it can use nothing of is not its capability.
        const usable = offered === undefined ? tools : tools.filter((tool) => offered(visibility.toGatewayTool(tool)));
        if (usable.length > 0) capabilities.push(capabilityOf(known.get(name), name, usable));
      }
      return capabilities;
    },

    async capabilityTools(session, pluginName) {
      const tools = (await visibility.visiblePlugins(session)).get(pluginName);
      return tools?.map((tool) => visibility.toGatewayTool(tool));
    },

    async catalogOverview(session) {
      const known = await caches.plugins();
      const byPlugin = await visibility.visiblePlugins(session);
      const plugins = [...byPlugin].map(([name, tools]) => {
        const capability = capabilityOf(known.get(name), name, tools);
        return {
          name,
          // Issue #26: the overview names plugins as calls do (`name__tool`). A server's own title
          // (serverInfo) is the same for every install of it: four "Everything Reference Server"s.
          title: name,
          ...(capability.category ? { category: capability.category } : {}),
          toolCount: tools.length,
          ...(capability.summary ? { summary: capability.summary } : {}),
        };
      });
      const loose = (await visibility.visible(session)).filter((tool) => !tool.pluginName).length;
      return { toolCount: plugins.reduce((sum, p) => sum + p.toolCount, 0) + loose, plugins };
    },

    async suggestMarketplace(_session, query, limit) {
      const hits = await deps.plugins.searchMarketplace(query, limit * 2);
      return hits
        .filter((hit) => hit.installable && hit.installedAs === null)
        .slice(0, limit)
        .map((hit) => ({
          name: hit.name,
          title: hit.title ?? hit.name,
          summary: hit.description,
          install: `quiver plugin add ${hit.install}`,
        }));
    },
  };
}
