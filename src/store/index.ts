/**
 * @module store
 * Public surface of the storage layer.
 */
export type { Database, Queryable, QueryResult, NotificationHandler } from './database.ts';
export { openStore, parseStoreLocation, describeStoreLocation } from './open.ts';
export type { StoreLocation, OpenedStore, OpenStoreOptions } from './open.ts';
export { migrate, loadMigrations } from './migrator.ts';
export type { Migration, MigrationResult } from './migrator.ts';
