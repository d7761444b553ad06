/**
 * @module store/repositories/shared-limits
 * Replica-wide rate limits and concurrency caps (migration 0061, issue #16), timed on the
 * database's clock so replicas with skewed clocks agree.
 *
 * - A token bucket is one row per scope. Taking a token is one statement: the refill since
 *   `updated_at` is computed in SQL and the row is updated only when at least one token is
 *   there, under the row lock `ON CONFLICT DO UPDATE` takes, so concurrent takers never
 *   overdraw. Several buckets (plugin and tool) are taken in one transaction: all or none.
 * - A concurrency cap of N is N slot rows per scope. A slot is claimed through the primary key
 *   (a free or expired slot only), so two replicas can never hold the same slot; a lease lapses
 *   at `expires_at` unless renewed, which frees the slots of a replica that died.
 */
import type { Database, Queryable } from '../database.ts';

/** One bucket to take a token from: `capacity` tokens at most, refilled at `ratePerMs`. */
export interface SharedBucket {
  scope: string;
  capacity: number;
  ratePerMs: number;
}

/** Taken, or refused with the longest wait among the empty buckets. */
export type SharedTakeResult = { ok: true } | { ok: false; retryAfterMs: number };

// The refill since the last update, on the database clock; a new row starts full.
const AVAILABLE = `LEAST($2::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM (clock_timestamp() - b.updated_at))::float8 * 1000) * $3::float8)`;

const TAKE_SQL = `INSERT INTO runtime_rate_buckets AS b (scope, tokens, updated_at)
  VALUES ($1, $2::float8 - 1, clock_timestamp())
  ON CONFLICT (scope) DO UPDATE SET tokens = ${AVAILABLE} - 1, updated_at = GREATEST(b.updated_at, clock_timestamp())
  WHERE ${AVAILABLE} >= 1
  RETURNING tokens`;

const AVAILABLE_SQL = `SELECT ${AVAILABLE} AS available FROM runtime_rate_buckets b WHERE b.scope = $1`;

class Refused extends Error {
  constructor(readonly bucket: SharedBucket) {
    super('bucket empty');
  }
}

async function takeOne(queryable: Queryable, bucket: SharedBucket): Promise<boolean> {
  const { rows } = await queryable.query(TAKE_SQL, [bucket.scope, bucket.capacity, bucket.ratePerMs]);
  return rows.length === 1;
}

/** How long until `bucket` holds one token again. */
async function retryAfterMs(db: Queryable, bucket: SharedBucket): Promise<number> {
  const { rows } = await db.query<{ available: number | string }>(AVAILABLE_SQL, [bucket.scope, bucket.capacity, bucket.ratePerMs]);
  const available = Number(rows[0]?.available ?? bucket.capacity);
  return Math.max(1, Math.ceil((1 - available) / bucket.ratePerMs));
}

/** Takes one token from every bucket, or from none when one is empty. */
export async function takeSharedTokens(db: Database, buckets: readonly SharedBucket[]): Promise<SharedTakeResult> {
  if (buckets.length === 0) return { ok: true };
  try {
    if (buckets.length === 1) {
      if (!(await takeOne(db, buckets[0]!))) throw new Refused(buckets[0]!);
    } else {
      await db.transaction(async (tx) => {
        for (const bucket of buckets) if (!(await takeOne(tx, bucket))) throw new Refused(bucket);
      });
    }
    return { ok: true };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, retryAfterMs: await retryAfterMs(db, error.bucket) };
  }
}

const CLAIM_SQL = `WITH candidate AS (
    SELECT s AS slot FROM generate_series(0, $2::int - 1) AS s
    WHERE NOT EXISTS (
      SELECT 1 FROM runtime_concurrency_leases l WHERE l.scope = $1 AND l.slot = s AND l.expires_at > clock_timestamp())
    ORDER BY random() LIMIT 1)
  INSERT INTO runtime_concurrency_leases AS l (scope, slot, holder, expires_at)
  SELECT $1, slot, $3, clock_timestamp() + make_interval(secs => $4::float8 / 1000) FROM candidate
  ON CONFLICT (scope, slot) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
  WHERE l.expires_at <= clock_timestamp()
  RETURNING slot`;

/**
 * Claims one of the `limit` slots of `scope` for `holder` until `ttlMs` from now; resolves to the
 * slot, or undefined when every slot is held (or another replica won the race for the free one).
 */
export async function claimConcurrencySlot(db: Queryable, input: { scope: string; limit: number; holder: string; ttlMs: number }): Promise<number | undefined> {
  const { rows } = await db.query<{ slot: number }>(CLAIM_SQL, [input.scope, input.limit, input.holder, input.ttlMs]);
  return rows[0]?.slot;
}

/** Extends a held lease; false when it lapsed and another holder took the slot. */
export async function renewConcurrencySlot(db: Queryable, input: { scope: string; slot: number; holder: string; ttlMs: number }): Promise<boolean> {
  const result = await db.query(
    `UPDATE runtime_concurrency_leases SET expires_at = clock_timestamp() + make_interval(secs => $4::float8 / 1000)
     WHERE scope = $1 AND slot = $2 AND holder = $3`,
    [input.scope, input.slot, input.holder, input.ttlMs],
  );
  return result.affectedRows === 1;
}

/** Gives a slot back (only if `holder` still holds it). */
export async function releaseConcurrencySlot(db: Queryable, input: { scope: string; slot: number; holder: string }): Promise<void> {
  await db.query(`DELETE FROM runtime_concurrency_leases WHERE scope = $1 AND slot = $2 AND holder = $3`, [input.scope, input.slot, input.holder]);
}

/** Live leases of a scope (for tests and health). */
export async function countConcurrencyLeases(db: Queryable, scope: string): Promise<number> {
  const { rows } = await db.query<{ held: number }>(
    `SELECT count(*)::int AS held FROM runtime_concurrency_leases WHERE scope = $1 AND expires_at > clock_timestamp()`,
    [scope],
  );
  return Number(rows[0]?.held ?? 0);
}
