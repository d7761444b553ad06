/**
 * @module store/repositories/auth-users
 * Accounts of the built-in authorization server (issue #27): invited by an admin, each in one
 * organisation with its roles and the scopes its tokens may carry. Only hashes are stored: the
 * scrypt hash of the password and the SHA-256 of the one-time sign-up token.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate, toDateOrNull } from './mapping.ts';

/** An account as stored. */
export interface AuthUserRow {
  id: string;
  email: string;
  orgId: string;
  roles: string[];
  scopes: string[];
  passwordHash: string | null;
  inviteExpiresAt: Date | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

interface Raw {
  id: string;
  email: string;
  org_id: string;
  roles: string[];
  scopes: string[];
  password_hash: string | null;
  invite_expires_at: unknown;
  disabled_at: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'id, email, org_id, roles, scopes, password_hash, invite_expires_at, disabled_at, created_at, updated_at';

const toRow = (raw: Raw): AuthUserRow => ({
  id: raw.id,
  email: raw.email,
  orgId: raw.org_id,
  roles: raw.roles,
  scopes: raw.scopes,
  passwordHash: raw.password_hash,
  inviteExpiresAt: toDateOrNull(raw.invite_expires_at),
  disabledAt: toDateOrNull(raw.disabled_at),
  createdAt: toDate(raw.created_at),
  updatedAt: toDate(raw.updated_at),
});

/** Inserts an invited account (no password yet); false when the email is taken. */
export async function insertAuthUser(
  db: Queryable,
  user: { id: string; email: string; orgId: string; roles: readonly string[]; scopes: readonly string[]; inviteHash: string; inviteExpiresAt: Date },
  now: Date,
): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO auth_users (id, email, org_id, roles, scopes, invite_hash, invite_expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $8) ON CONFLICT (email) DO NOTHING`,
    [user.id, user.email, user.orgId, jsonParam(user.roles), jsonParam(user.scopes), user.inviteHash, timeParam(user.inviteExpiresAt), timeParam(now)],
  );
  return result.affectedRows === 1;
}

/** Replaces the sign-up token of an account (a new invitation link); false when there is no such account. */
export async function setAuthUserInvite(db: Queryable, id: string, inviteHash: string, expiresAt: Date, now: Date): Promise<boolean> {
  const result = await db.query('UPDATE auth_users SET invite_hash = $2, invite_expires_at = $3, updated_at = $4 WHERE id = $1', [id, inviteHash, timeParam(expiresAt), timeParam(now)]);
  return result.affectedRows === 1;
}

export async function findAuthUserById(db: Queryable, id: string): Promise<AuthUserRow | undefined> {
  const { rows } = await db.query<Raw>(`SELECT ${COLUMNS} FROM auth_users WHERE id = $1`, [id]);
  return rows[0] ? toRow(rows[0]) : undefined;
}

export async function findAuthUserByEmail(db: Queryable, email: string): Promise<AuthUserRow | undefined> {
  const { rows } = await db.query<Raw>(`SELECT ${COLUMNS} FROM auth_users WHERE email = $1`, [email]);
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** The account a live sign-up token belongs to. */
export async function findAuthUserByInvite(db: Queryable, inviteHash: string, now: Date): Promise<AuthUserRow | undefined> {
  const { rows } = await db.query<Raw>(`SELECT ${COLUMNS} FROM auth_users WHERE invite_hash = $1 AND invite_expires_at > $2 AND disabled_at IS NULL`, [inviteHash, timeParam(now)]);
  return rows[0] ? toRow(rows[0]) : undefined;
}

/**
 * Sets the password and spends the sign-up token in one statement: only the request that still
 * holds the live token succeeds (a second use of the link changes nothing).
 */
export async function redeemAuthUserInvite(db: Queryable, inviteHash: string, passwordHash: string, now: Date): Promise<AuthUserRow | undefined> {
  const { rows } = await db.query<Raw>(
    `UPDATE auth_users SET password_hash = $2, invite_hash = NULL, invite_expires_at = NULL, updated_at = $3
     WHERE invite_hash = $1 AND invite_expires_at > $3 AND disabled_at IS NULL RETURNING ${COLUMNS}`,
    [inviteHash, passwordHash, timeParam(now)],
  );
  return rows[0] ? toRow(rows[0]) : undefined;
}

export async function listAuthUsers(db: Queryable): Promise<AuthUserRow[]> {
  const { rows } = await db.query<Raw>(`SELECT ${COLUMNS} FROM auth_users ORDER BY email`);
  return rows.map(toRow);
}

/** Updates organisation, roles and scopes; false when there is no such account. */
export async function updateAuthUser(db: Queryable, id: string, change: { orgId: string; roles: readonly string[]; scopes: readonly string[] }, now: Date): Promise<boolean> {
  const result = await db.query('UPDATE auth_users SET org_id = $2, roles = $3::jsonb, scopes = $4::jsonb, updated_at = $5 WHERE id = $1', [
    id,
    change.orgId,
    jsonParam(change.roles),
    jsonParam(change.scopes),
    timeParam(now),
  ]);
  return result.affectedRows === 1;
}

/** Disables (or enables) an account; false when there is no such account. */
export async function setAuthUserDisabled(db: Queryable, id: string, disabledAt: Date | null, now: Date): Promise<boolean> {
  const result = await db.query('UPDATE auth_users SET disabled_at = $2, invite_hash = NULL, updated_at = $3 WHERE id = $1', [id, disabledAt ? timeParam(disabledAt) : null, timeParam(now)]);
  return result.affectedRows === 1;
}

export async function deleteAuthUser(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM auth_users WHERE id = $1', [id]);
  return result.affectedRows === 1;
}
