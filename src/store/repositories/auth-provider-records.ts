/**
 * @module store/repositories/auth-provider-records
 * The storage of the built-in authorization server's protocol records (issue #27): one table
 * for every model `oidc-provider` keeps (Session, Grant, AuthorizationCode, RefreshToken,
 * Client, Interaction, …), keyed by (model, id), with the look-up columns its adapter contract
 * needs (grant id, user code, uid), expiry and consumption. Expired rows are never returned.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDateOrNull } from './mapping.ts';

/** One record as the adapter reads it. */
export interface ProviderRecord {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
}

interface Raw {
  payload: Record<string, unknown>;
  consumed_at: unknown;
}

const toRecord = (raw: Raw): ProviderRecord => ({ payload: raw.payload, consumedAt: toDateOrNull(raw.consumed_at) });

/** Writes a record (replacing one with the same model and id). */
export async function upsertProviderRecord(
  db: Queryable,
  record: { model: string; id: string; payload: Record<string, unknown>; grantId?: string | undefined; userCode?: string | undefined; uid?: string | undefined; expiresAt: Date | undefined },
): Promise<void> {
  await db.query(
    `INSERT INTO auth_provider_records (model, id, payload, grant_id, user_code, uid, expires_at)
     VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7)
     ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, user_code = EXCLUDED.user_code,
       uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at, consumed_at = NULL`,
    [record.model, record.id, jsonParam(record.payload), record.grantId ?? null, record.userCode ?? null, record.uid ?? null, record.expiresAt ? timeParam(record.expiresAt) : null],
  );
}

const LIVE = '(expires_at IS NULL OR expires_at > $3)';

export async function findProviderRecord(db: Queryable, model: string, id: string, now: Date): Promise<ProviderRecord | undefined> {
  const { rows } = await db.query<Raw>(`SELECT payload, consumed_at FROM auth_provider_records WHERE model = $1 AND id = $2 AND ${LIVE}`, [model, id, timeParam(now)]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

export async function findProviderRecordBy(db: Queryable, model: string, column: 'uid' | 'user_code', value: string, now: Date): Promise<ProviderRecord | undefined> {
  const { rows } = await db.query<Raw>(`SELECT payload, consumed_at FROM auth_provider_records WHERE model = $1 AND ${column} = $2 AND ${LIVE} LIMIT 1`, [model, value, timeParam(now)]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Marks a record used (a code redeemed, a refresh token rotated). */
export async function consumeProviderRecord(db: Queryable, model: string, id: string, now: Date): Promise<void> {
  await db.query('UPDATE auth_provider_records SET consumed_at = $3 WHERE model = $1 AND id = $2', [model, id, timeParam(now)]);
}

export async function deleteProviderRecord(db: Queryable, model: string, id: string): Promise<void> {
  await db.query('DELETE FROM auth_provider_records WHERE model = $1 AND id = $2', [model, id]);
}

/** Deletes every record of a grant (of any model: its codes and refresh tokens go with it). */
export async function deleteProviderRecordsOfGrant(db: Queryable, grantId: string): Promise<void> {
  await db.query('DELETE FROM auth_provider_records WHERE grant_id = $1', [grantId]);
}

/** Deletes expired records; the number deleted. */
export async function deleteExpiredProviderRecords(db: Queryable, now: Date): Promise<number> {
  const result = await db.query('DELETE FROM auth_provider_records WHERE expires_at IS NOT NULL AND expires_at <= $1', [timeParam(now)]);
  return result.affectedRows;
}
