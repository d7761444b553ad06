/**
 * @module store/repositories/auth-login-failures
 * Failed sign-ins of the built-in authorization server (migration 0112, issue #27), by key hash
 * (account or client address). The throttle asks for the failures of a key within its window
 * and records new ones; a success forgets an account's.
 */
import type { Queryable } from '../database.ts';
import { timeParam, toDate } from './mapping.ts';

/**
 * The time of the `rank`-th newest failure of `keyHash` after `since` (rank 1 is the newest), or
 * undefined when there are fewer.
 */
export async function nthRecentLoginFailure(db: Queryable, keyHash: string, since: Date, rank: number): Promise<Date | undefined> {
  const { rows } = await db.query<{ failed_at: unknown }>(
    'SELECT failed_at FROM auth_login_failures WHERE key_hash = $1 AND failed_at > $2 ORDER BY failed_at DESC OFFSET $3 LIMIT 1',
    [keyHash, timeParam(since), rank - 1],
  );
  return rows[0] === undefined ? undefined : toDate(rows[0].failed_at);
}

/** Records one failure of each key at `at`, and deletes every failure at or before `expiredBefore`. */
export async function recordLoginFailures(db: Queryable, keyHashes: readonly string[], at: Date, expiredBefore: Date): Promise<void> {
  await db.query('DELETE FROM auth_login_failures WHERE failed_at <= $1', [timeParam(expiredBefore)]);
  for (const keyHash of keyHashes) await db.query('INSERT INTO auth_login_failures (key_hash, failed_at) VALUES ($1, $2)', [keyHash, timeParam(at)]);
}

/** Forgets the failures of `keyHash`. */
export async function clearLoginFailures(db: Queryable, keyHash: string): Promise<void> {
  await db.query('DELETE FROM auth_login_failures WHERE key_hash = $1', [keyHash]);
}
