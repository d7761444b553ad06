/**
 * @module jobs/queue
 * The durable job queue in the database (DESIGN §3.11: "each periodic or queued job claimed by
 * exactly one replica"). Every operation is one SQL statement, so it behaves the same on PGlite
 * (one connection) and on PostgreSQL with many replicas:
 * - a claim takes the oldest runnable job with `FOR UPDATE SKIP LOCKED`, so two workers never
 *   take the same row, and gives it a lease (`lease_until`) measured by the database clock;
 * - a running job whose lease ran out (its worker died or hung) is runnable again;
 * - completion, failure and heartbeats name the lease owner: a worker that lost its lease can
 *   no longer write the job's outcome over the new owner's.
 */
import type { Queryable } from '../store/database.ts';

/** Where a job is in its life. */
export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

/** A job row. */
export interface JobRecord {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  status: JobStatus;
  dedupeKey: string | null;
  /** Claims so far (a crashed attempt counts). */
  attempts: number;
  maxAttempts: number;
  runAfter: Date;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  lastError: string | null;
  result: unknown;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** Options of `enqueueJob`. */
export interface EnqueueOptions {
  /** While a job with this key is queued or running, enqueueing again returns that job. */
  dedupeKey?: string | undefined;
  /** Not before this time (default: now). */
  runAfter?: Date | undefined;
  /** Claims before the job is marked failed (default 3). */
  maxAttempts?: number | undefined;
}

interface JobRow {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  status: JobStatus;
  dedupe_key: string | null;
  attempts: number;
  max_attempts: number;
  run_after: Date;
  lease_owner: string | null;
  lease_until: Date | null;
  last_error: string | null;
  result: unknown;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const COLUMNS = 'id, kind, payload, status, dedupe_key, attempts, max_attempts, run_after, lease_owner, lease_until, last_error, result, created_at, updated_at, finished_at';

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    kind: row.kind,
    payload: row.payload,
    status: row.status,
    dedupeKey: row.dedupe_key,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    runAfter: new Date(row.run_after),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until === null ? null : new Date(row.lease_until),
    lastError: row.last_error,
    result: row.result,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  };
}

/** Adds a job, or returns the queued / running job holding the same `dedupeKey`. */
export async function enqueueJob(db: Queryable, kind: string, payload: Record<string, unknown>, options: EnqueueOptions = {}): Promise<JobRecord> {
  const params = [kind, JSON.stringify(payload), options.dedupeKey ?? null, options.runAfter ?? null, options.maxAttempts ?? 3];
  // ON CONFLICT names the partial unique index by its columns and predicate.
  const inserted = await db.query<JobRow>(
    `INSERT INTO jobs (kind, payload, dedupe_key, run_after, max_attempts)
     VALUES ($1, $2::jsonb, $3, COALESCE($4::timestamptz, now()), $5)
     ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING
     RETURNING ${COLUMNS}`,
    params,
  );
  if (inserted.rows[0]) return toRecord(inserted.rows[0]);
  const existing = await db.query<JobRow>(
    `SELECT ${COLUMNS} FROM jobs WHERE dedupe_key = $1 AND status IN ('queued', 'running') ORDER BY created_at DESC LIMIT 1`,
    [options.dedupeKey],
  );
  // The holder finished between the two statements: try once more (it cannot conflict again unless re-enqueued).
  if (!existing.rows[0]) return enqueueJob(db, kind, payload, options);
  return toRecord(existing.rows[0]);
}

/** A job by id. */
export async function findJob(db: Queryable, id: string): Promise<JobRecord | undefined> {
  const result = await db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
  return result.rows[0] ? toRecord(result.rows[0]) : undefined;
}

/**
 * Claims the oldest runnable job of `kinds` for `owner`: queued and due, or running with an
 * expired lease (its worker is gone). Counts an attempt and sets a lease of `leaseMs`.
 */
export async function claimJob(db: Queryable, owner: string, kinds: readonly string[], leaseMs: number): Promise<JobRecord | undefined> {
  const result = await db.query<JobRow>(
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = $1,
       lease_until = now() + $2::integer * interval '1 millisecond', updated_at = now()
     WHERE id = (
       SELECT id FROM jobs
       WHERE kind = ANY($3::text[])
         AND ((status = 'queued' AND run_after <= now()) OR (status = 'running' AND lease_until < now()))
       ORDER BY run_after, created_at
       LIMIT 1
       FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [owner, Math.round(leaseMs), [...kinds]],
  );
  return result.rows[0] ? toRecord(result.rows[0]) : undefined;
}

/** Extends the lease; false when `owner` no longer holds the job (it must stop working on it). */
export async function renewJobLease(db: Queryable, id: string, owner: string, leaseMs: number): Promise<boolean> {
  const result = await db.query(
    `UPDATE jobs SET lease_until = now() + $3::integer * interval '1 millisecond', updated_at = now()
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [id, owner, Math.round(leaseMs)],
  );
  return result.affectedRows > 0;
}

/** Marks the job done with its result; false when `owner` had lost it. */
export async function completeJob(db: Queryable, id: string, owner: string, result: unknown): Promise<boolean> {
  const updated = await db.query(
    `UPDATE jobs SET status = 'done', result = $3::jsonb, lease_owner = NULL, lease_until = NULL, last_error = NULL,
       finished_at = now(), updated_at = now()
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [id, owner, JSON.stringify(result ?? null)],
  );
  return updated.affectedRows > 0;
}

/**
 * Records a failed attempt: queued again after `retryInMs` while attempts remain, else `failed`.
 * False when `owner` had lost the job.
 */
export async function failJob(db: Queryable, id: string, owner: string, error: string, retryInMs: number): Promise<boolean> {
  const updated = await db.query(
    `UPDATE jobs SET
       status = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
       run_after = CASE WHEN attempts < max_attempts THEN now() + $4::integer * interval '1 millisecond' ELSE run_after END,
       finished_at = CASE WHEN attempts < max_attempts THEN NULL ELSE now() END,
       last_error = $3, lease_owner = NULL, lease_until = NULL, updated_at = now()
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [id, owner, error.slice(0, 4000), Math.round(retryInMs)],
  );
  return updated.affectedRows > 0;
}

/** Gives a claimed job back untouched (worker shutting down): queued now, the attempt not counted. */
export async function releaseJob(db: Queryable, id: string, owner: string): Promise<boolean> {
  const updated = await db.query(
    `UPDATE jobs SET status = 'queued', attempts = GREATEST(attempts - 1, 0), run_after = now(),
       lease_owner = NULL, lease_until = NULL, updated_at = now()
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [id, owner],
  );
  return updated.affectedRows > 0;
}

/** Marks a job failed at once (a crashed worker's job that had no attempts left). */
export async function abandonJob(db: Queryable, id: string, owner: string, error: string): Promise<boolean> {
  const updated = await db.query(
    `UPDATE jobs SET status = 'failed', last_error = $3, lease_owner = NULL, lease_until = NULL, finished_at = now(), updated_at = now()
     WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
    [id, owner, error],
  );
  return updated.affectedRows > 0;
}

/** Deletes done and failed jobs finished more than `olderThanMs` ago; returns how many. */
export async function pruneFinishedJobs(db: Queryable, olderThanMs: number): Promise<number> {
  const deleted = await db.query(
    `DELETE FROM jobs WHERE status IN ('done', 'failed') AND finished_at < now() - $1::bigint * interval '1 millisecond'`,
    [Math.round(olderThanMs)],
  );
  return deleted.affectedRows;
}
