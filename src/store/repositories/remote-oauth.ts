/**
 * @module store/repositories/remote-oauth
 * The sealed OAuth state of each remote MCP server Quiver is a client of (issue #27), keyed by
 * the server's URL. Only sealed values move through here (`plugins/oauth` seals and opens).
 */
import type { Queryable } from '../database.ts';
import { timeParam } from './mapping.ts';
import type { SealedSecret } from './secrets.ts';

interface Row {
  ciphertext: string;
  iv: string;
  auth_tag: string;
  key_id: string;
  algorithm: string;
}

/** The sealed state of `resource`, or undefined. */
export async function findRemoteOAuth(db: Queryable, resource: string): Promise<SealedSecret | undefined> {
  const { rows } = await db.query<Row>('SELECT ciphertext, iv, auth_tag, key_id, algorithm FROM remote_oauth WHERE resource = $1', [resource]);
  const row = rows[0];
  return row ? { ciphertext: row.ciphertext, iv: row.iv, authTag: row.auth_tag, keyId: row.key_id, algorithm: row.algorithm } : undefined;
}

/** Stores (or replaces) the sealed state of `resource`. */
export async function upsertRemoteOAuth(db: Queryable, resource: string, sealed: SealedSecret, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO remote_oauth (resource, ciphertext, iv, auth_tag, key_id, algorithm, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (resource) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, iv = EXCLUDED.iv, auth_tag = EXCLUDED.auth_tag,
       key_id = EXCLUDED.key_id, algorithm = EXCLUDED.algorithm, updated_at = EXCLUDED.updated_at`,
    [resource, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId, sealed.algorithm, timeParam(now)],
  );
}

/** Deletes the state of `resource`; true when there was one. */
export async function deleteRemoteOAuth(db: Queryable, resource: string): Promise<boolean> {
  const { rows } = await db.query<{ resource: string }>('DELETE FROM remote_oauth WHERE resource = $1 RETURNING resource', [resource]);
  return rows.length > 0;
}
