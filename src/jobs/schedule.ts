/**
 * @module jobs/schedule
 * Periodic work with one owner across replicas (issue #16). A periodic kind is an ordinary job
 * whose dedupe key is `every:<kind>`: at most one run is queued or running at any time, so the
 * queue's claim (`FOR UPDATE SKIP LOCKED`, a lease) gives each run to exactly one replica and a
 * dead owner's run to another once its lease runs out. The next run is enqueued `intervalMs`
 * after a run finishes (by the replica that ran it), and every replica re-ensures one is queued
 * now and then, so a crash between finishing and enqueueing, or a fresh cluster, loses no run.
 */
import type { Queryable } from '../store/database.ts';
import { enqueueJob, type JobRecord } from './queue.ts';

/** The dedupe key of a periodic kind's single pending run. */
export function periodicKey(kind: string): string {
  return `every:${kind}`;
}

/** A periodic kind's schedule. */
export interface PeriodicSchedule {
  kind: string;
  intervalMs: number;
  /** When this process last made sure a run is pending (ms since the epoch). */
  ensuredAt: number;
}

/** Makes sure one run of `kind` is queued or running; a new one is due `delayMs` from now. */
export function ensurePeriodicRun(db: Queryable, kind: string, delayMs: number): Promise<JobRecord> {
  return enqueueJob(db, kind, { periodic: true }, { dedupeKey: periodicKey(kind), runAfter: new Date(Date.now() + delayMs), maxAttempts: 3 });
}

/** How often a replica re-ensures a pending run: the interval, at least a second, at most a minute. */
export function ensureEveryMs(intervalMs: number): number {
  return Math.min(60_000, Math.max(1_000, intervalMs));
}
