/**
 * @module store/repositories/secrets
 * Sealed plugin credentials (AES-256-GCM, DESIGN §3.5). This layer only moves sealed values:
 * ciphertext, IV and auth tag as base64 text, and the id of the key that sealed them.
 * Sealing and opening live in the plugins service; plaintext never reaches SQL.
 */
import type { Queryable } from '../database.ts';
import { timeParam, toDate } from './mapping.ts';

/** A sealed value as stored. */
export interface SealedSecret {
  ciphertext: string;
  iv: string;
  authTag: string;
  keyId: string;
  algorithm: string;
}

/** A stored secret with its key (name) and times; no plaintext. */
export interface SecretRow extends SealedSecret {
  pluginId: string;
  key: string;
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  plugin_id: string;
  key: string;
  ciphertext: string;
  iv: string;
  auth_tag: string;
  key_id: string;
  algorithm: string;
  created_at: unknown;
  updated_at: unknown;
}

const toSecret = (row: Row): SecretRow => ({
  pluginId: row.plugin_id,
  key: row.key,
  ciphertext: row.ciphertext,
  iv: row.iv,
  authTag: row.auth_tag,
  keyId: row.key_id,
  algorithm: row.algorithm,
  createdAt: toDate(row.created_at),
  updatedAt: toDate(row.updated_at),
});

/** Stores (or replaces) one sealed secret of a plugin. */
export async function upsertSecret(db: Queryable, pluginId: string, key: string, sealed: SealedSecret, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO plugin_secrets (plugin_id, key, ciphertext, iv, auth_tag, key_id, algorithm, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (plugin_id, key) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, iv = EXCLUDED.iv, auth_tag = EXCLUDED.auth_tag,
       key_id = EXCLUDED.key_id, algorithm = EXCLUDED.algorithm, updated_at = EXCLUDED.updated_at`,
    [pluginId, key, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId, sealed.algorithm, timeParam(now)],
  );
}

/** Every sealed secret of a plugin, by key. */
export async function listSecrets(db: Queryable, pluginId: string): Promise<SecretRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT plugin_id, key, ciphertext, iv, auth_tag, key_id, algorithm, created_at, updated_at
       FROM plugin_secrets WHERE plugin_id = $1 ORDER BY key`,
    [pluginId],
  );
  return rows.map(toSecret);
}

/** Deletes one secret; true when it existed. */
export async function deleteSecret(db: Queryable, pluginId: string, key: string): Promise<boolean> {
  const result = await db.query('DELETE FROM plugin_secrets WHERE plugin_id = $1 AND key = $2', [pluginId, key]);
  return result.affectedRows > 0;
}

/** Deletes every secret of a plugin (it is being removed). */
export async function deletePluginSecrets(db: Queryable, pluginId: string): Promise<void> {
  await db.query('DELETE FROM plugin_secrets WHERE plugin_id = $1', [pluginId]);
}
