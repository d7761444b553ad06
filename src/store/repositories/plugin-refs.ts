/**
 * @module store/repositories/plugin-refs
 * The slice of the plugins table the catalog needs: resolving a plugin name to its id, and
 * creating the row a self-registering plugin needs (seed 001 §9.1, `source_type = 'sync'`).
 * Installing and managing plugins belongs to the plugins service.
 */
import type { Queryable } from '../database.ts';
import { timeParam } from './mapping.ts';

/** A plugin's id and name. */
export interface PluginRef {
  id: string;
  name: string;
}

/** Finds a plugin by name (deleted plugins included: their tools still point at them). */
export async function findPluginByName(db: Queryable, name: string): Promise<PluginRef | undefined> {
  const { rows } = await db.query<PluginRef>('SELECT id, name FROM plugins WHERE name = $1', [name]);
  return rows[0];
}

/** Finds a plugin by id. */
export async function findPluginById(db: Queryable, id: string): Promise<PluginRef | undefined> {
  const { rows } = await db.query<PluginRef>('SELECT id, name FROM plugins WHERE id = $1', [id]);
  return rows[0];
}

/**
 * Creates a `sync` plugin row or records the new version on an existing one. The upsert
 * row-locks the plugin, so two syncs of one plugin run one after the other.
 */
export async function upsertSyncPlugin(db: Queryable, name: string, version: string, now: Date): Promise<{ id: string; created: boolean }> {
  const { rows } = await db.query<{ id: string; created: boolean }>(
    `INSERT INTO plugins (name, version, source_type, created_at, updated_at) VALUES ($1, $2, 'sync', $3, $3)
     ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version,
       updated_at = CASE WHEN plugins.version IS DISTINCT FROM EXCLUDED.version THEN EXCLUDED.updated_at ELSE plugins.updated_at END
     RETURNING id, (xmax = 0) AS created`,
    [name, version, timeParam(now)],
  );
  return rows[0]!;
}
