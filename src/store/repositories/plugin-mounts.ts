/**
 * @module store/repositories/plugin-mounts
 * Host paths granted to a plugin (`plugin_host_mounts`, issue #26), with who granted them and
 * when. A path is granted once per plugin: granting it again changes its mode and records the
 * new grant.
 */
import type { Queryable } from '../database.ts';
import { timeParam, toDate } from './mapping.ts';

/** One granted host path. */
export interface PluginMountRow {
  path: string;
  mode: 'ro' | 'rw';
  reason: string;
  actor: string;
  createdAt: Date;
}

interface Row {
  path: string;
  mode: 'ro' | 'rw';
  reason: string;
  actor: string;
  created_at: unknown;
}

/** Grants (or re-grants with a new mode) one host path; true when the row was new or changed. */
export async function upsertPluginMount(db: Queryable, pluginId: string, mount: { path: string; mode: 'ro' | 'rw'; reason: string; actor: string; createdAt: Date }): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO plugin_host_mounts (plugin_id, path, mode, reason, actor, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (plugin_id, path) DO UPDATE SET mode = EXCLUDED.mode, reason = EXCLUDED.reason, actor = EXCLUDED.actor, created_at = EXCLUDED.created_at
     WHERE plugin_host_mounts.mode <> EXCLUDED.mode`,
    [pluginId, mount.path, mount.mode, mount.reason, mount.actor, timeParam(mount.createdAt)],
  );
  return result.affectedRows > 0;
}

/** Every host path granted to a plugin, by path. */
export async function listPluginMounts(db: Queryable, pluginId: string): Promise<PluginMountRow[]> {
  const { rows } = await db.query<Row>('SELECT path, mode, reason, actor, created_at FROM plugin_host_mounts WHERE plugin_id = $1 ORDER BY path', [pluginId]);
  return rows.map((row) => ({ path: row.path, mode: row.mode, reason: row.reason, actor: row.actor, createdAt: toDate(row.created_at) }));
}

/** Withdraws one grant; true when it existed. */
export async function deletePluginMount(db: Queryable, pluginId: string, path: string): Promise<boolean> {
  const result = await db.query('DELETE FROM plugin_host_mounts WHERE plugin_id = $1 AND path = $2', [pluginId, path]);
  return result.affectedRows > 0;
}
