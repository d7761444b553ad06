/**
 * @module composition/gateway-backend/catalog-changes
 * Catalog change notifications for the gateway: one database listener on the selection
 * engine's channel, started by the first subscriber. Each change first runs `onChange`
 * (the backend clears its caches), then tells every subscriber; a throwing subscriber is
 * logged and the others still hear it.
 */
import type { Logger } from '../../core/logger.ts';
import type { CatalogChange, GatewayBackend } from '../../gateway/backend.ts';
import { CATALOG_CHANGED_CHANNEL } from '../../selection/index.ts';
import type { Database } from '../../store/database.ts';

/** Catalog change subscriptions and their teardown. */
export interface CatalogChanges extends Pick<GatewayBackend, 'onCatalogChanged'> {
  /** Drops the subscribers and stops listening. */
  close(): Promise<void>;
}

/** Creates the catalog change subscriptions over the database's notifications. */
export function createCatalogChanges(db: Pick<Database, 'listen'>, onChange: () => void, logger: Logger): CatalogChanges {
  const listeners = new Set<(change: CatalogChange) => void>();
  let unlisten: Promise<() => Promise<void>> | undefined;
  return {
    onCatalogChanged(listener) {
      listeners.add(listener);
      unlisten ??= db.listen(CATALOG_CHANGED_CHANNEL, () => {
        onChange();
        for (const each of listeners) {
          try {
            each({});
          } catch (error) {
            logger.warn({ err: error }, 'gateway: catalog listener threw');
          }
        }
      });
      unlisten.catch((error) => logger.warn({ err: error }, 'gateway: could not listen for catalog changes'));
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      listeners.clear();
      // A listen that failed was logged when it failed; closing must still succeed.
      if (unlisten) await unlisten.then((stop) => stop()).catch(() => {});
    },
  };
}
