/**
 * @module app
 * The composition root: the one place that turns configuration into wired parts. Fronts
 * (CLI, HTTP, MCP) receive an `App` and never build services themselves.
 */
import pino from 'pino';
import type { QuiverConfig } from './config.ts';
import type { Logger } from './core/logger.ts';
import type { Database } from './store/database.ts';
import { openStore } from './store/open.ts';
import type { MigrationResult } from './store/migrator.ts';
import { createApiKeyService, type ApiKeyService } from './access/api-keys.ts';
import type { ApiRouteModule } from './api/app.ts';
import { accessRoutes } from './api/routes/access.ts';
import { createCatalogService, type CatalogService } from './catalog/index.ts';
import { catalogRoutes } from './api/routes/catalog.ts';

/** Everything a front needs, wired. */
export interface App {
  config: QuiverConfig;
  logger: Logger;
  db: Database;
  migrations: MigrationResult[];
  apiKeys: ApiKeyService;
  catalog: CatalogService;
  /** The HTTP route modules of every part. */
  apiModules(): ApiRouteModule[];
  /** Stops timers, processes and the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Creates the structured JSON logger of the app (stderr, so stdout can carry MCP). */
export function createLogger(level: QuiverConfig['logLevel']): Logger {
  return pino({ level, base: { service: 'quiver' }, redact: { paths: ['*.apiKey', '*.authorization', '*.headers.authorization', '*.env', '*.secret', '*.value'], censor: '[redacted]' } }, pino.destination(2)) as unknown as Logger;
}

export interface CreateAppOptions {
  logger?: Logger;
}

/** Opens the store and wires every part. */
export async function createApp(config: QuiverConfig, options: CreateAppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const { db, migrations } = await openStore(config.store);
  const apiKeys = createApiKeyService({ db });
  const catalog = createCatalogService({ db, logger });

  let closed = false;
  return {
    config,
    logger,
    db,
    migrations,
    apiKeys,
    catalog,
    apiModules: () => [accessRoutes({ apiKeys }), catalogRoutes({ catalog })],
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}
