/**
 * @module sessions/replicas
 * SQL of the `mcp_replicas` table (migration 0098, issue #24): the replicas answering MCP
 * requests on one PostgreSQL, each with the URL the others reach it at. A row is live while its
 * heartbeat is fresh on the database clock, so replicas with drifting clocks agree.
 */
import type { Queryable } from '../store/database.ts';

/** Registers (or re-registers) a replica and its URL, heartbeat now. */
export async function registerReplica(db: Queryable, id: string, url: string): Promise<void> {
  await db.query(
    `INSERT INTO mcp_replicas (id, url) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = now()`,
    [id, url],
  );
}

/** Renews a replica's heartbeat; false when its row is gone (then register again). */
export async function beatReplica(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query(`UPDATE mcp_replicas SET heartbeat_at = now() WHERE id = $1 RETURNING id`, [id]);
  return rows.length === 1;
}

/** The URL of a replica whose heartbeat is younger than `maxAgeMs`, else undefined. */
export async function liveReplicaUrl(db: Queryable, id: string, maxAgeMs: number): Promise<string | undefined> {
  const { rows } = await db.query<{ url: string }>(
    `SELECT url FROM mcp_replicas WHERE id = $1 AND heartbeat_at > now() - make_interval(secs => $2::float8 / 1000)`,
    [id, maxAgeMs],
  );
  return rows[0]?.url;
}

/** Removes a replica (it shuts down) and rows silent for longer than `staleMs` (replicas that died). */
export async function removeReplica(db: Queryable, id: string, staleMs: number): Promise<void> {
  await db.query(`DELETE FROM mcp_replicas WHERE id = $1 OR heartbeat_at < now() - make_interval(secs => $2::float8 / 1000)`, [id, staleMs]);
}
