/**
 * @module store/open
 * One string picks the store: `postgres://…` (or `postgresql://…`) is a real PostgreSQL,
 * `memory://` is a throwaway PGlite in memory, anything else is a PGlite data folder.
 */
import type { Database } from './database.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { loadMigrations, migrate, type MigrationResult } from './migrator.ts';
import type { StoreLocation } from './location.ts';

// Parsed in location.ts, which loads nothing else; re-exported for this module's users.
export { parseStoreLocation, type StoreLocation } from './location.ts';

/** A human-readable description of a location with no credentials in it. */
export function describeStoreLocation(location: StoreLocation): string {
  if (location.kind === 'memory') return 'PGlite (in memory)';
  if (location.kind === 'folder') return `PGlite (${location.path})`;
  const url = new URL(location.url);
  return `PostgreSQL (${url.hostname}:${url.port || '5432'}${url.pathname})`;
}

export interface OpenStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Pool size for PostgreSQL. */
  poolSize?: number;
  /**
   * Called once the engine starts on its own (the embedded store's thread has been asked to
   * open; PostgreSQL's driver is loaded): what the caller loads from then on runs beside the
   * store's start instead of ahead of it (issue #28).
   */
  onStarted?: () => void;
}

/** An open database with its migration report. */
export interface OpenedStore {
  db: Database;
  location: StoreLocation;
  migrations: MigrationResult[];
}

/** Opens (and by default migrates) the store at `location`. */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  let db: Database;
  const migrations = options.migrate === false ? undefined : loadMigrations();
  // A new PGlite store may start from the build-time template (initdb + these migrations).
  const template = migrations === undefined ? undefined : { migrations };
  // Each driver loads only when its kind of store opens (issue #28): config parses locations
  // through this module, and a CLI command forwarded to a running server opens no store at all.
  const onStarted = options.onStarted === undefined ? {} : { onStarted: options.onStarted };
  if (location.kind === 'postgres') {
    const { openPostgres } = await import('./postgres-database.ts');
    options.onStarted?.();
    db = await openPostgres(location.url, options.poolSize === undefined ? {} : { poolSize: options.poolSize });
  } else if (location.kind === 'memory') {
    const { openPGlite } = await import('./pglite-database.ts');
    db = await openPGlite({ ...(template === undefined ? {} : { template }), ...onStarted });
  } else {
    const release = lockDataDir(location.path);
    try {
      const { openPGlite } = await import('./pglite-database.ts');
      db = await openPGlite({ dataDir: location.path, onClose: release, ...(template === undefined ? {} : { template }), ...onStarted });
    } catch (error) {
      release();
      throw error;
    }
  }
  try {
    const results = migrations === undefined ? [] : await migrate(db, migrations);
    return { db, location, migrations: results };
  } catch (error) {
    await db.close();
    throw error;
  }
}
