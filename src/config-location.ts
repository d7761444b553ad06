/**
 * @module config-location
 * Where Quiver's home and store are, from the environment and the global flags: the part of
 * `loadConfig` (config.ts, which uses it) that a command needs to find the server running on its
 * data folder, without the configuration's schemas (issue #28: a command forwarded to a running
 * `quiver serve` loads no schema library). It validates nothing: config.ts does.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseStoreLocation, type StoreLocation } from './store/location.ts';

/** The settings that place the store: the environment's, overridden by `--data` and `--database-url`. */
export interface StoreSettings {
  env: { QUIVER_HOME?: string | undefined; QUIVER_DATA_DIR?: string | undefined; QUIVER_DATABASE_URL?: string | undefined; HOME?: string | undefined };
  overrides?: { dataDir?: string | undefined; databaseUrl?: string | undefined };
  /** Effective user id: root's default home is /var/lib/quiver. */
  uid?: number | undefined;
}

/** Quiver's home folder and where its data lives. */
export function locateStore({ env, overrides = {}, uid }: StoreSettings): { homeDir: string; store: StoreLocation } {
  // Sandboxed plugins run as an unprivileged user and must traverse to their cached code;
  // root's home (0700) would hide it, so root defaults to a system folder.
  const homeDir = env.QUIVER_HOME ?? (uid === 0 ? '/var/lib/quiver' : join(env.HOME ?? homedir(), '.quiver'));
  const dataDir = overrides.dataDir ?? env.QUIVER_DATA_DIR ?? join(homeDir, 'data');
  const databaseUrl = overrides.databaseUrl ?? env.QUIVER_DATABASE_URL;
  // --data wins over a database URL from the environment; otherwise a URL wins over the folder.
  return { homeDir, store: parseStoreLocation(overrides.dataDir !== undefined ? dataDir : (databaseUrl ?? dataDir)) };
}
