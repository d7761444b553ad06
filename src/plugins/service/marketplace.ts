/**
 * @module plugins/service/marketplace
 * The marketplace catalog as the service keeps it: imported from MCP Registry server.json
 * documents, listed, and searched lexically for installable suggestions (`market:<name>`).
 * Installing from it is `add`'s job (install.ts); this part never installs anything.
 */
import { listMarketplaceServers, upsertMarketplaceServers } from '../../store/repositories/marketplace.ts';
import { listPluginRecords } from '../../store/repositories/plugins.ts';
import { lexicalSearch } from '../lexical-search.ts';
import { installPlanFor, marketplaceServerSchema, parseMarketplaceCatalog } from '../marketplace.ts';
import type { PluginContext } from './context.ts';
import type { PluginService } from './types.ts';

/** The marketplace methods of the service. */
export type MarketplacePart = Pick<PluginService, 'importMarketplace' | 'listMarketplace' | 'searchMarketplace'>;

/** Names and titles weigh more than descriptions, with little length normalisation. */
const MARKETPLACE_FIELDS = [
  { weight: 2, b: 0.3 },
  { weight: 2, b: 0.3 },
  { weight: 1, b: 0.75 },
];

/** True when `add market:<name>` knows how to install the entry. */
function isInstallable(server: Record<string, unknown>): boolean {
  try {
    installPlanFor(marketplaceServerSchema.parse(server));
    return true;
  } catch {
    return false;
  }
}

/** Creates the marketplace part of the service. */
export function createMarketplacePart(context: PluginContext): MarketplacePart {
  const { db, logger } = context;
  return {
    async importMarketplace(document, importOptions = {}) {
      const parsed = parseMarketplaceCatalog(document);
      const result = await upsertMarketplaceServers(
        db,
        parsed.servers.map((server) => ({
          name: server.name,
          title: server.title ?? null,
          description: server.description,
          version: server.version ?? null,
          server: server as Record<string, unknown>,
          source: importOptions.source ?? null,
        })),
        context.now(),
      );
      logger.info({ imported: parsed.servers.length, skipped: parsed.warnings.length }, 'marketplace imported');
      return { imported: parsed.servers.length, ...result, warnings: parsed.warnings };
    },

    listMarketplace: () => listMarketplaceServers(db),

    async searchMarketplace(query, limit = 10) {
      const entries = await listMarketplaceServers(db);
      const installed = new Map<string, string>();
      for (const plugin of await listPluginRecords(db, { includeRemoved: false })) {
        if (typeof plugin.source['marketplace'] === 'string') installed.set(plugin.source['marketplace'], plugin.name);
      }
      const hits = lexicalSearch(
        entries.map((entry) => ({ item: entry, fields: [entry.name, entry.title ?? '', entry.description] })),
        MARKETPLACE_FIELDS,
        query,
        limit,
      );
      return hits.map(({ item, score }) => ({
        name: item.name,
        title: item.title,
        description: item.description,
        version: item.version,
        install: `market:${item.name}`,
        installable: isInstallable(item.server),
        installedAs: installed.get(item.name) ?? null,
        score,
      }));
    },
  };
}
