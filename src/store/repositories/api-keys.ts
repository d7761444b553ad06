/**
 * @module store/repositories/api-keys
 * API keys: only the SHA-256 of a key is stored.
 */
import type { Queryable } from '../database.ts';

/** An API key row, without any secret. */
export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  workspaceId: string | null;
  projectId: string | null;
  orgId: string | null;
  userId: string | null;
  roles: string[];
  tier: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = `id, name, prefix, scopes, workspace_id, project_id, org_id, user_id, roles, tier, created_at, last_used_at, revoked_at`;

interface RawRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  workspace_id: string | null;
  project_id: string | null;
  org_id: string | null;
  user_id: string | null;
  roles: string[];
  tier: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

function toRow(raw: RawRow): ApiKeyRow {
  return {
    id: raw.id,
    name: raw.name,
    prefix: raw.prefix,
    scopes: raw.scopes,
    workspaceId: raw.workspace_id,
    projectId: raw.project_id,
    orgId: raw.org_id,
    userId: raw.user_id,
    roles: raw.roles,
    tier: raw.tier,
    createdAt: raw.created_at,
    lastUsedAt: raw.last_used_at,
    revokedAt: raw.revoked_at,
  };
}

/** Fields of a new key. */
export interface NewApiKey {
  name: string;
  prefix: string;
  keyHash: string;
  scopes: string[];
  workspaceId?: string | null | undefined;
  projectId?: string | null | undefined;
  orgId?: string | null | undefined;
  userId?: string | null | undefined;
  roles?: string[] | undefined;
  tier?: string | null | undefined;
}

/** Inserts a key and returns it. */
export async function insertApiKey(db: Queryable, key: NewApiKey): Promise<ApiKeyRow> {
  const { rows } = await db.query<RawRow>(
    `INSERT INTO api_keys (name, prefix, key_hash, scopes, workspace_id, project_id, org_id, user_id, roles, tier)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
    [
      key.name,
      key.prefix,
      key.keyHash,
      key.scopes,
      key.workspaceId ?? null,
      key.projectId ?? null,
      key.orgId ?? null,
      key.userId ?? null,
      key.roles ?? [],
      key.tier ?? null,
    ],
  );
  return toRow(rows[0]!);
}

/** Finds a live (not revoked) key by its hash. */
export async function findApiKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, [keyHash]);
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** Lists keys, newest first. */
export async function listApiKeys(db: Queryable): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at DESC`);
  return rows.map(toRow);
}

/** Counts live keys that carry a scope. */
export async function countLiveKeysWithScope(db: Queryable, scope: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL AND $1 = ANY(scopes)',
    [scope],
  );
  return rows[0]?.n ?? 0;
}

/** Revokes a key; returns false when no live key has that id. */
export async function revokeApiKey(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
  return result.affectedRows > 0;
}

/** Records that a key was used (best effort, coarse). */
export async function touchApiKey(db: Queryable, id: string): Promise<void> {
  await db.query(
    "UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
    [id],
  );
}
