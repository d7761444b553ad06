/**
 * @module jobs
 * Durable background jobs in the database, for every replica (issue #10; reused by #11, #16).
 *
 * @example
 * const jobs = createJobs({ db, logger, pollMs: 1000 });
 * jobs.register('verify', async ({ job, signal }) => verify(job.payload, signal));
 * jobs.start();
 * await jobs.enqueue('verify', { pluginId }, { dedupeKey: `verify:${pluginId}` });
 */
export { createJobs, retryDelayMs, type Jobs, type JobsOptions, type JobHandler, type JobContext } from './worker.ts';
export type { JobRecord, JobStatus, EnqueueOptions } from './queue.ts';
