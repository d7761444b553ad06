/**
 * @module store/repositories/plugin-env
 * Non-secret settings of a plugin (`plugin_env`, issue #15): plain environment variables the
 * admin sets with `quiver plugin env set`. Values are stored and returned in plain; credentials
 * live in `plugin_secrets` instead.
 */
import type { Queryable } from '../database.ts';
import { timeParam, toDate } from './mapping.ts';

/** One stored setting. */
export interface PluginEnvRow {
  key: string;
  value: string;
  updatedAt: Date;
}

interface Row {
  key: string;
  value: string;
  updated_at: unknown;
}

/** Stores (or replaces) one setting of a plugin. */
export async function upsertPluginEnv(db: Queryable, pluginId: string, key: string, value: string, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO plugin_env (plugin_id, key, value, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (plugin_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
    [pluginId, key, value, timeParam(now)],
  );
}

/** Every setting of a plugin, by key. */
export async function listPluginEnv(db: Queryable, pluginId: string): Promise<PluginEnvRow[]> {
  const { rows } = await db.query<Row>('SELECT key, value, updated_at FROM plugin_env WHERE plugin_id = $1 ORDER BY key', [pluginId]);
  return rows.map((row) => ({ key: row.key, value: row.value, updatedAt: toDate(row.updated_at) }));
}

/** Deletes one setting; true when it existed. */
export async function deletePluginEnv(db: Queryable, pluginId: string, key: string): Promise<boolean> {
  const result = await db.query('DELETE FROM plugin_env WHERE plugin_id = $1 AND key = $2', [pluginId, key]);
  return result.affectedRows > 0;
}

/** Deletes every setting of a plugin (it is being removed). */
export async function deleteAllPluginEnv(db: Queryable, pluginId: string): Promise<void> {
  await db.query('DELETE FROM plugin_env WHERE plugin_id = $1', [pluginId]);
}
