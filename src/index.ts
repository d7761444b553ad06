/**
 * @module quiver
 * Library entry point for TypeScript orchestrators: open a store, build the app, and use
 * its services in-process.
 */
export * from './core/index.ts';
export { openStore, parseStoreLocation } from './store/index.ts';
export type { Database, StoreLocation } from './store/index.ts';
export { loadConfig } from './config.ts';
export type { QuiverConfig } from './config.ts';
export { createApp } from './app.ts';
export type { App } from './app.ts';
export * from './selection/index.ts';
