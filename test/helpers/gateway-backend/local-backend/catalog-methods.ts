/**
 * @module test/helpers/gateway-backend/local-backend/catalog-methods
 * What the backend says about its plugins: capability summaries from the manifests, a
 * plugin's tools, the catalog overview, and marketplace suggestions for plugins not running.
 */
import type { CapabilitySummary, CatalogOverview, GatewayBackend } from '../../../../src/gateway/backend.ts';
import { listedPlugin, listedTools, pluginListed } from './access.ts';
import { rankMarketplace } from './lexical.ts';
import type { BackendState } from './types.ts';

/** The catalog methods over the shared state. */
export function createCatalogMethods(
  state: BackendState,
): Pick<GatewayBackend, 'listCapabilities' | 'capabilityTools' | 'suggestMarketplace' | 'catalogOverview'> {
  const { plugins } = state;
  return {
    async listCapabilities(session) {
      const out: CapabilitySummary[] = [];
      for (const plugin of plugins.values()) {
        if (!pluginListed(plugin, session)) continue;
        const manifest = plugin.spec.manifest ?? {};
        out.push({
          name: plugin.spec.name,
          title: manifest.title ?? plugin.spec.name,
          summary: manifest.summary ?? '',
          whenToUse: manifest.whenToUse ?? [],
          ...(manifest.whenNotToUse ? { whenNotToUse: manifest.whenNotToUse } : {}),
          tags: manifest.tags ?? [],
          ...(manifest.category ? { category: manifest.category } : {}),
          ...(manifest.stability ? { stability: manifest.stability } : {}),
          visibility: manifest.visibility ?? 'on-demand',
          toolCount: listedTools(plugin, session).length,
        });
      }
      return out;
    },

    async capabilityTools(session, pluginName) {
      const plugin = listedPlugin(plugins, session, pluginName);
      return plugin ? listedTools(plugin, session) : undefined;
    },

    async suggestMarketplace(_session, query, limit) {
      return rankMarketplace((state.options.marketplace ?? []).filter((entry) => !plugins.has(entry.name)), query, limit);
    },

    async catalogOverview(session) {
      const overview: CatalogOverview = { toolCount: 0, plugins: [] };
      for (const plugin of plugins.values()) {
        if (!pluginListed(plugin, session)) continue;
        const count = listedTools(plugin, session).length;
        if (count === 0) continue;
        overview.toolCount += count;
        const manifest = plugin.spec.manifest ?? {};
        overview.plugins.push({
          name: plugin.spec.name,
          title: manifest.title ?? plugin.spec.name,
          ...(manifest.category ? { category: manifest.category } : {}),
          toolCount: count,
          ...(manifest.summary ? { summary: manifest.summary } : {}),
        });
      }
      return overview;
    },
  };
}
