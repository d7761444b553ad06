/**
 * Periodic work with one owner (issue #16): three job workers ("replicas", each with its own
 * connection on PostgreSQL) register the same periodic kind; runs never overlap, one run is
 * pending at a time, the cadence follows the interval, and when the worker that runs it stops
 * the others carry on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachBackend } from '../helpers/backends.ts';
import { openReplicaDatabases, type ReplicaDatabases } from '../helpers/replica-databases.ts';
import { createJobs, type Jobs } from '../../src/jobs/index.ts';

describeEachBackend('periodic jobs with one owner', (backend) => {
  let three: ReplicaDatabases;
  before(async () => {
    three = await openReplicaDatabases(backend, 3);
  });
  after(async () => {
    await three.close();
  });

  test('three workers, one run at a time, on the interval; a stopped owner is replaced', async () => {
    const runs: Array<{ worker: number; start: number; end: number }> = [];
    let running = 0;
    let overlaps = 0;
    const workers: Jobs[] = three.dbs.map((db, worker) => {
      const jobs = createJobs({ db, pollMs: 20, leaseMs: 1000, firstPeriodicRunMs: 0 });
      jobs.every('tick', 150, async () => {
        running += 1;
        if (running > 1) overlaps += 1;
        const start = Date.now();
        await sleep(30);
        running -= 1;
        runs.push({ worker, start, end: Date.now() });
        return { worker };
      });
      jobs.start();
      return jobs;
    });
    // Waits for `count` runs (polls: on a loaded machine the embedded store makes runs slower).
    const untilRuns = async (count: number): Promise<void> => {
      const until = Date.now() + 15_000;
      while (runs.length < count && Date.now() < until) await sleep(25);
      assert.ok(runs.length >= count, `only ${runs.length} runs in 15 s`);
    };
    try {
      const started = Date.now();
      await untilRuns(4);
      // A run just ended: look between runs, once its completion and the next run are written. They
      // are two statements (complete, then enqueue the next), so a loaded machine can show none
      // pending for a moment: look again until there is one, then there must be only one.
      const pendingRuns = async (): Promise<number> =>
        (await three.dbs[0]!.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE dedupe_key = 'every:tick' AND status IN ('queued', 'running')`)).rows[0]!.n;
      await sleep(60);
      let pending = await pendingRuns();
      for (const until = Date.now() + 10_000; pending === 0 && Date.now() < until; pending = await pendingRuns()) await sleep(25);
      assert.equal(pending, 1, 'one pending run for all three workers');
      assert.equal(overlaps, 0);
      // One run per 150 ms after the previous one finished, at most: never faster than the interval.
      const elapsed = Date.now() - started;
      assert.ok(runs.length <= Math.floor(elapsed / 150) + 1, `runs: ${runs.length} in ${elapsed} ms`);
      for (let index = 1; index < runs.length; index += 1) {
        assert.ok(runs[index]!.start - runs[index - 1]!.end >= 140, `run ${index} started ${runs[index]!.start - runs[index - 1]!.end} ms after the previous ended`);
      }
      // The worker that ran the last run stops; the others go on.
      const last = runs.at(-1)!.worker;
      await workers[last]!.close();
      const before = runs.length;
      await untilRuns(before + 2);
      const later = runs.slice(before);
      assert.ok(later.every((run) => run.worker !== last), 'the stopped worker ran no more');
      assert.equal(overlaps, 0);
    } finally {
      await Promise.allSettled(workers.map((jobs) => jobs.close()));
    }
  });
});
