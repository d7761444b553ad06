/**
 * @module app
 * The composition root: the one place that turns configuration into wired parts. Fronts
 * (CLI, HTTP, MCP) receive an `App` and never build services themselves.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import type { QuiverConfig } from './config.ts';
import type { Logger } from './core/logger.ts';
import type { Database } from './store/database.ts';
import { openStore } from './store/open.ts';
import type { MigrationResult } from './store/migrator.ts';
import { createApiKeyService, type ApiKeyService } from './access/api-keys.ts';
import { createCatalogService, type CatalogService } from './catalog/index.ts';
import { createSupervisor, type Supervisor } from './runtime/index.ts';
import { createPluginService, type PluginService } from './plugins/service.ts';
import { createLazySecretBox, loadSecretKey } from './plugins/secret-box.ts';
import type { ApiRouteModule } from './api/app.ts';
import { accessRoutes } from './api/routes/access.ts';
import { catalogRoutes } from './api/routes/catalog.ts';
import { pluginRoutes } from './api/routes/plugins.ts';

/** Everything a front needs, wired. */
export interface App {
  config: QuiverConfig;
  logger: Logger;
  db: Database;
  migrations: MigrationResult[];
  apiKeys: ApiKeyService;
  catalog: CatalogService;
  supervisor: Supervisor;
  plugins: PluginService;
  /** The HTTP route modules of every part. */
  apiModules(): ApiRouteModule[];
  /** Stops timers, processes and the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Creates the structured JSON logger of the app (stderr, so stdout can carry MCP). */
export function createLogger(level: QuiverConfig['logLevel']): Logger {
  return pino(
    {
      level,
      base: { service: 'quiver' },
      redact: { paths: ['*.apiKey', '*.authorization', '*.headers.authorization', '*.env', '*.secret', '*.value'], censor: '[redacted]' },
    },
    pino.destination(2),
  ) as unknown as Logger;
}

export interface CreateAppOptions {
  logger?: Logger;
}

/** Opens the store and wires every part. */
export async function createApp(config: QuiverConfig, options: CreateAppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const { db, migrations } = await openStore(config.store);
  const closers: Array<() => Promise<void>> = [() => db.close()];
  try {
    if (config.store.kind !== 'memory') {
      // 0711: sandboxed plugins run as an unprivileged user and must traverse into their folders.
      mkdirSync(config.homeDir, { recursive: true, mode: 0o711 });
    }
    const apiKeys = createApiKeyService({ db });
    const catalog = createCatalogService({ db, logger });
    const supervisor = createSupervisor({
      logger: logger.child({ part: 'runtime' }),
      sandbox: {
        dangerouslyAllowUnsandboxed: config.dangerouslyAllowUnsandboxed,
        stateRoot: join(config.homeDir, 'state'),
      },
    });
    closers.unshift(() => supervisor.close());
    const secrets = createLazySecretBox(() => loadSecretKey({ configured: config.secretKey, homeDir: config.homeDir }).key);
    const plugins = createPluginService({
      db,
      catalog,
      supervisor,
      cacheDir: join(config.homeDir, 'plugins'),
      secrets,
      logger: logger.child({ part: 'plugins' }),
    });

    let closed = false;
    return {
      config,
      logger,
      db,
      migrations,
      apiKeys,
      catalog,
      supervisor,
      plugins,
      apiModules: () => [accessRoutes({ apiKeys }), catalogRoutes({ catalog }), pluginRoutes({ plugins })],
      async close() {
        if (closed) return;
        closed = true;
        for (const close of closers) await close().catch((error) => logger.warn({ err: error }, 'close failed'));
      },
    };
  } catch (error) {
    for (const close of closers) await close().catch(() => {});
    throw error;
  }
}
