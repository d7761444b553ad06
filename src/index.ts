/**
 * @module quiver
 * Quiver's public library API (documented in docs/library.md): configure and wire the app,
 * sync a plugin's tools into the catalog, select the few tools one request should see, and
 * format them for a provider. Everything not exported here is internal and may change
 * without notice. The database-free part is also published alone as `quiver/core`
 * (src/public/core.ts), which loads without PGlite, pg or the MCP runtime.
 *
 * Exports are by name, not `export *`, so an internal export never becomes public by accident.
 *
 * @example
 * import { createApp, loadConfig, selectTools } from 'quiver';
 * const app = await createApp(loadConfig({ QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }));
 * await app.catalog.syncPlugin({ pluginId: 'crm', version: '1.0.0', tools: [{ name: 'forecast_pipeline', description: 'Forecast the sales pipeline' }] });
 * const { tools, schemas } = await selectTools(app.selection, { query: 'pipeline forecast', provider: 'anthropic' });
 * console.log(tools[0].qualifiedName, schemas.length); // → crm__forecast_pipeline 1
 * await app.close();
 */

export * from './public/core.ts';

// Configuration and the wired app (Node only: opens the store, starts workers).
export { loadConfig, DEFAULT_PORT } from './config.ts';
export type { QuiverConfig, ConfigOverrides, McpLimits } from './config.ts';
export { createApp } from './app.ts';
export type { App, CreateAppOptions } from './app.ts';
export { silentLogger } from './core/logger.ts';
export type { Logger } from './core/logger.ts';

// The store: one location string picks PGlite in a folder, PGlite in memory, or PostgreSQL.
export { openStore, parseStoreLocation } from './store/index.ts';
export type { Database, StoreLocation, OpenedStore, MigrationResult } from './store/index.ts';

// The catalog and a plugin's self-registration payload (seed 001 §9.1): `app.catalog.syncPlugin`.
export { syncPayloadSchema, MAX_SYNC_TOOLS } from './catalog/index.ts';
export type { CatalogService, SyncPayload, ParsedSyncPayload, SyncReport } from './catalog/index.ts';

// Selection: the pipeline that picks the tools one request sees (docs/selection.md).
export { createSelectionEngine, selectTools, selectToolsInputSchema, selectionContextSchema, outcomeInputSchema } from './selection/index.ts';
export type {
  SelectionEngine,
  SelectionEngineOptions,
  SelectToolsInput,
  SelectionContext,
  SelectionResult,
  SelectedTool,
  SelectionReason,
  SelectOptions,
  OutcomeInput,
  OutcomeResult,
} from './selection/index.ts';
