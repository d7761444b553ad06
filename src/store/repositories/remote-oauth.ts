/**
 * @module store/repositories/remote-oauth
 * The sealed OAuth state Quiver holds as a client of remote MCP servers (issue #27), keyed by
 * the server's URL and the authorization's owner (the hub, a user or an organisation), and the
 * admin's setting of which kind of owner each server's calls use. Only sealed values move
 * through here (`plugins/oauth` seals and opens).
 */
import type { Queryable } from '../database.ts';
import { timeParam } from './mapping.ts';
import type { SealedSecret } from './secrets.ts';

/** Who an authorization belongs to. */
export type RemoteOwnerKind = 'hub' | 'user' | 'organisation';
/** One owner: the hub (id ''), a user or an organisation by id. */
export interface RemoteOwnerKey {
  kind: RemoteOwnerKind;
  id: string;
}

const HUB: RemoteOwnerKey = { kind: 'hub', id: '' };

interface Row {
  ciphertext: string;
  iv: string;
  auth_tag: string;
  key_id: string;
  algorithm: string;
}

/** The sealed state of `resource` for `owner` (default the hub), or undefined. */
export async function findRemoteOAuth(db: Queryable, resource: string, owner: RemoteOwnerKey = HUB): Promise<SealedSecret | undefined> {
  const { rows } = await db.query<Row>('SELECT ciphertext, iv, auth_tag, key_id, algorithm FROM remote_oauth WHERE resource = $1 AND owner_kind = $2 AND owner_id = $3', [
    resource,
    owner.kind,
    owner.id,
  ]);
  const row = rows[0];
  return row ? { ciphertext: row.ciphertext, iv: row.iv, authTag: row.auth_tag, keyId: row.key_id, algorithm: row.algorithm } : undefined;
}

/** Stores (or replaces) the sealed state of `resource` for `owner` (default the hub). */
export async function upsertRemoteOAuth(db: Queryable, resource: string, sealed: SealedSecret, now: Date, owner: RemoteOwnerKey = HUB): Promise<void> {
  await db.query(
    `INSERT INTO remote_oauth (resource, owner_kind, owner_id, ciphertext, iv, auth_tag, key_id, algorithm, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     ON CONFLICT (resource, owner_kind, owner_id) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, iv = EXCLUDED.iv, auth_tag = EXCLUDED.auth_tag,
       key_id = EXCLUDED.key_id, algorithm = EXCLUDED.algorithm, updated_at = EXCLUDED.updated_at`,
    [resource, owner.kind, owner.id, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId, sealed.algorithm, timeParam(now)],
  );
}

/** Every owner holding state for `resource`. */
export async function listRemoteOAuthOwners(db: Queryable, resource: string): Promise<RemoteOwnerKey[]> {
  const { rows } = await db.query<{ owner_kind: RemoteOwnerKind; owner_id: string }>('SELECT owner_kind, owner_id FROM remote_oauth WHERE resource = $1 ORDER BY owner_kind, owner_id', [resource]);
  return rows.map((row) => ({ kind: row.owner_kind, id: row.owner_id }));
}

/** Deletes the state of `resource` for `owner`; true when there was one. */
export async function deleteRemoteOAuth(db: Queryable, resource: string, owner: RemoteOwnerKey = HUB): Promise<boolean> {
  const { rows } = await db.query<{ resource: string }>('DELETE FROM remote_oauth WHERE resource = $1 AND owner_kind = $2 AND owner_id = $3 RETURNING resource', [resource, owner.kind, owner.id]);
  return rows.length > 0;
}

/** The kind of owner whose authorization `resource`'s calls carry (default 'hub'). */
export async function findRemoteOwnerKind(db: Queryable, resource: string): Promise<RemoteOwnerKind> {
  const { rows } = await db.query<{ owner_kind: RemoteOwnerKind }>('SELECT owner_kind FROM remote_oauth_servers WHERE resource = $1', [resource]);
  return rows[0]?.owner_kind ?? 'hub';
}

/** Sets the kind of owner of `resource`'s calls. */
export async function setRemoteOwnerKind(db: Queryable, resource: string, kind: RemoteOwnerKind, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO remote_oauth_servers (resource, owner_kind, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (resource) DO UPDATE SET owner_kind = EXCLUDED.owner_kind, updated_at = EXCLUDED.updated_at`,
    [resource, kind, timeParam(now)],
  );
}
