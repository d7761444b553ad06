/**
 * @module jobs/worker
 * The job service: handlers registered per kind, `enqueue`, and a worker loop that claims one
 * job at a time (jobs/queue.ts), keeps its lease alive with a heartbeat while the handler runs,
 * and records the outcome: done with the handler's result, or a failed attempt retried with
 * exponential backoff until `maxAttempts`. A worker that stops heartbeating (crash, hang, lost
 * connection) loses its lease and any worker retries the job; if that was its last attempt the
 * job is marked failed instead of running a fourth time.
 * Periodic kinds (`every`, jobs/schedule.ts) run on one replica at a time, whichever claims them.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import {
  abandonJob,
  claimJob,
  pruneFinishedJobs,
  completeJob,
  enqueueJob,
  failJob,
  findJob,
  releaseJob,
  renewJobLease,
  type EnqueueOptions,
  type JobRecord,
} from './queue.ts';
import { ensureEveryMs, ensurePeriodicRun, type PeriodicSchedule } from './schedule.ts';

/** What a handler receives. */
export interface JobContext {
  job: JobRecord;
  /** Aborted when the lease is lost or the worker closes: stop and throw. */
  signal: AbortSignal;
}

/** Runs one job; its resolved value is stored as the job's result (JSON). Throwing fails the attempt. */
export type JobHandler = (context: JobContext) => Promise<unknown>;

/** Options of `createJobs`. */
export interface JobsOptions {
  db: Database;
  logger?: Logger;
  /** How often an idle worker looks for work, ms (QUIVER_JOBS_POLL_MS). Default 1000. */
  pollMs?: number;
  /** Lease of a claimed job, ms; renewed every third of it. Default 30 000. */
  leaseMs?: number;
  /** First retry delay, ms, doubled per attempt up to `maxBackoffMs`. Default 5 000. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Names this worker in `lease_owner` (default host:pid:random). */
  owner?: string;
  /** How soon a periodic kind first runs once started, ms (default: its interval). */
  firstPeriodicRunMs?: number;
  /** Finished jobs are deleted this long after they finished, ms (default 7 days; 0 keeps them). */
  retentionMs?: number;
}

/** The job service of one process. */
export interface Jobs {
  /** Registers the handler of a kind (one per kind). */
  register(kind: string, handler: JobHandler): void;
  /**
   * Registers a periodic kind: one run every `intervalMs` across every replica that registers
   * it, claimed by exactly one of them (a dead owner's run is taken over after its lease).
   */
  every(kind: string, intervalMs: number, handler: JobHandler): void;
  /** Adds a job (or returns the queued / running one with the same dedupe key) and wakes the local worker. */
  enqueue(kind: string, payload: Record<string, unknown>, options?: EnqueueOptions): Promise<JobRecord>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Claims and runs at most one job of the registered kinds; true when one ran. */
  runOnce(): Promise<boolean>;
  /**
   * Starts the polling loop (idempotent). `firstPollMs` delays the first sweep of queued and
   * periodic jobs (a server's start-up answers requests first, issue #28); an enqueue still
   * wakes the loop at once.
   */
  start(options?: { firstPollMs?: number }): void;
  /** Stops the loop; a running job is aborted and handed back to the queue. Safe to call twice. */
  close(): Promise<void>;
}

/** Delay before retry number `attempt` (1-based): backoff · 2^(attempt−1), capped. */
export function retryDelayMs(attempt: number, backoffMs: number, maxBackoffMs: number): number {
  return Math.min(maxBackoffMs, backoffMs * 2 ** Math.max(0, attempt - 1));
}

/** What running one claimed job needs from its worker. */
interface JobExecution {
  db: Database;
  owner: string;
  leaseMs: number;
  logger: Logger;
  handler: JobHandler;
  /** True once the worker is closing: an aborted job then goes back to the queue unfailed. */
  closing(): boolean;
  retryDelayMs(attempts: number): number;
  afterSuccess(): Promise<void>;
}

/**
 * Runs one claimed job under a heartbeat that renews its lease (losing the lease aborts it: another
 * worker may own the job now), then completes, fails (with backoff) or hands it back.
 */
async function executeJob(job: JobRecord, controller: AbortController, run: JobExecution): Promise<void> {
  const { db, owner, leaseMs, logger } = run;
  let leaseLost = false;
  const heartbeat = setInterval(() => {
    renewJobLease(db, job.id, owner, leaseMs).then(
      (held) => {
        if (!held && !leaseLost) {
          leaseLost = true;
          controller.abort(new Error('job lease lost'));
        }
      },
      (error: unknown) => logger.warn({ err: error, job: job.id }, 'job heartbeat failed'),
    );
  }, Math.max(10, Math.floor(leaseMs / 3)));
  heartbeat.unref();
  try {
    const result = await run.handler({ job, signal: controller.signal });
    if (!(await completeJob(db, job.id, owner, result ?? null))) logger.warn({ job: job.id, kind: job.kind }, 'job finished after its lease was lost');
    await run.afterSuccess();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (run.closing() && controller.signal.aborted && !leaseLost) {
      await releaseJob(db, job.id, owner);
    } else {
      await failJob(db, job.id, owner, message, run.retryDelayMs(job.attempts));
      logger.warn({ job: job.id, kind: job.kind, attempt: job.attempts, error: message }, 'job attempt failed');
    }
  } finally {
    clearInterval(heartbeat);
  }
}

/** Creates the job service; call `start()` for the background loop. */
export function createJobs(options: JobsOptions): Jobs {
  const { db } = options;
  const logger = (options.logger ?? silentLogger).child({ part: 'jobs' });
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 30_000;
  const backoffMs = options.backoffMs ?? 5000;
  const maxBackoffMs = options.maxBackoffMs ?? 10 * 60_000;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const handlers = new Map<string, JobHandler>();
  const periodic = new Map<string, PeriodicSchedule>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let closed = false;
  let current: { controller: AbortController; done: Promise<void> } | undefined;
  const retentionMs = options.retentionMs ?? 7 * 86_400_000;
  let lastPruned = 0;

  /** After a periodic run finished: the next one, due an interval later. */
  async function scheduleNextRun(kind: string): Promise<void> {
    const schedule = periodic.get(kind);
    if (!schedule) return;
    await ensurePeriodicRun(db, kind, schedule.intervalMs);
    schedule.ensuredAt = Date.now();
  }

  /** Every so often each replica makes sure each periodic kind has a run pending. */
  async function ensurePeriodicRuns(): Promise<void> {
    const now = Date.now();
    for (const schedule of periodic.values()) {
      if (now - schedule.ensuredAt < ensureEveryMs(schedule.intervalMs)) continue;
      const first = schedule.ensuredAt === 0;
      schedule.ensuredAt = now;
      await ensurePeriodicRun(db, schedule.kind, first ? (options.firstPeriodicRunMs ?? schedule.intervalMs) : schedule.intervalMs);
    }
  }

  async function runOnce(): Promise<boolean> {
    if (handlers.size === 0 || closed) return false;
    for (;;) {
      const job = await claimJob(db, owner, [...handlers.keys()], leaseMs);
      if (!job) return false;
      // A job whose worker died on its last attempt is not run again.
      if (job.attempts > job.maxAttempts) {
        await abandonJob(db, job.id, owner, `${job.lastError ? `${job.lastError}; ` : ''}worker lost its lease on the last attempt`);
        continue;
      }
      const controller = new AbortController();
      const done = executeJob(job, controller, {
        db,
        owner,
        leaseMs,
        logger,
        handler: handlers.get(job.kind)!,
        closing: () => closed,
        retryDelayMs: (attempts) => retryDelayMs(attempts, backoffMs, maxBackoffMs),
        afterSuccess: () => scheduleNextRun(job.kind),
      });
      current = { controller, done };
      try {
        await done;
      } finally {
        current = undefined;
      }
      return true;
    }
  }

  function schedule(delayMs: number): void {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void loop();
    }, delayMs);
    timer.unref();
  }

  async function loop(): Promise<void> {
    if (running || closed) return;
    running = true;
    let ran = false;
    try {
      // At most hourly: the table keeps finished jobs for a while (their result and error), not forever.
      if (retentionMs > 0 && Date.now() - lastPruned > 3_600_000) {
        lastPruned = Date.now();
        await pruneFinishedJobs(db, retentionMs);
      }
      await ensurePeriodicRuns();
      ran = await runOnce();
    } catch (error) {
      logger.warn({ err: error }, 'job poll failed');
    } finally {
      running = false;
    }
    schedule(ran ? 0 : pollMs);
  }

  function register(kind: string, handler: JobHandler): void {
    if (handlers.has(kind)) throw new Error(`a handler for job kind '${kind}' is already registered`);
    handlers.set(kind, handler);
  }

  let started = false;
  return {
    register,
    every(kind, intervalMs, handler) {
      if (!(intervalMs >= 10)) throw new RangeError(`the interval of periodic job kind '${kind}' must be at least 10 ms`);
      register(kind, handler);
      periodic.set(kind, { kind, intervalMs, ensuredAt: 0 });
    },
    async enqueue(kind, payload, enqueueOptions) {
      const job = await enqueueJob(db, kind, payload, enqueueOptions);
      if (started && handlers.has(kind)) {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        schedule(0);
      }
      return job;
    },
    get: (id) => findJob(db, id),
    runOnce,
    start(startOptions) {
      if (started || closed) return;
      started = true;
      schedule(startOptions?.firstPollMs ?? 0);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const active = current;
      if (active) {
        active.controller.abort(new Error('worker closing'));
        await active.done.catch(() => undefined);
      }
    },
  };
}
