/**
 * The job queue on both backends: exactly-once claims among concurrent workers (on PostgreSQL
 * each worker has its own Database, as separate replicas would), lease expiry after a worker
 * stops heartbeating, retries with backoff up to the attempt limit, dedupe keys.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import { openReplicaDatabases, type ReplicaDatabases } from '../../test/helpers/replica-databases.ts';
import type { Database } from '../store/database.ts';
import { claimJob, enqueueJob, findJob, pruneFinishedJobs } from './queue.ts';
import { createJobs, retryDelayMs, type Jobs } from './worker.ts';

describeEachBackend('job queue', (backend) => {
  // Three connections to one fresh database: three Database objects on PostgreSQL, one shared PGlite.
  let shared: ReplicaDatabases;
  let db: Database;
  const open: Jobs[] = [];

  before(async () => {
    shared = await openReplicaDatabases(backend, 3);
    db = shared.dbs[0]!;
  });
  after(async () => {
    for (const jobs of open) await jobs.close();
    await shared.close();
  });

  function workers(count: number, options: { leaseMs?: number; backoffMs?: number } = {}): Jobs[] {
    const created = Array.from({ length: count }, (_, index) =>
      createJobs({ db: shared.dbs[index % shared.dbs.length]!, owner: `w${index}-${randomBytes(3).toString('hex')}`, pollMs: 20, ...options }),
    );
    open.push(...created);
    return created;
  }

  it('gives one job to exactly one of three concurrent workers', async () => {
    const kind = `once-${randomBytes(3).toString('hex')}`;
    const runs: string[] = [];
    const three = workers(3);
    three.forEach((jobs, index) =>
      jobs.register(kind, async ({ job }) => {
        runs.push(`w${index}:${job.id}`);
        await sleep(30);
        return { by: index };
      }),
    );
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push((await three[0]!.enqueue(kind, { n: i })).id);
    // All three race for every job at once, repeatedly, until the queue is empty.
    for (let round = 0; round < 6; round++) await Promise.all(three.map((jobs) => jobs.runOnce()));
    while ((await Promise.all(three.map((jobs) => jobs.runOnce()))).some(Boolean));
    assert.equal(runs.length, 6, `each job ran once: ${runs.join(', ')}`);
    assert.deepEqual(new Set(runs.map((run) => run.split(':')[1])), new Set(ids));
    for (const id of ids) {
      const job = await findJob(db, id);
      assert.equal(job?.status, 'done');
      assert.equal(job?.attempts, 1);
      assert.equal(typeof (job?.result as { by: number }).by, 'number');
    }
  });

  it('retries the job of a worker that stopped heartbeating once its lease has run out', async () => {
    const kind = `crash-${randomBytes(3).toString('hex')}`;
    const job = await enqueueJob(db, kind, { x: 1 });
    // The "crashed" worker: claims with a short lease and never renews or finishes. A second, so
    // that a loaded machine's pause between the claim and the next check cannot outlast it.
    const claimed = await claimJob(shared.dbs[1]!, 'dead-worker', [kind], 1_000);
    assert.equal(claimed?.id, job.id);
    const [survivor] = workers(1);
    let ran = 0;
    survivor!.register(kind, async () => {
      ran += 1;
      return 'ok';
    });
    assert.equal(await survivor!.runOnce(), false, 'the lease still holds: nobody may take the job');
    await sleep(1_100);
    assert.equal(await survivor!.runOnce(), true);
    const after = await findJob(db, job.id);
    assert.equal(ran, 1);
    assert.equal(after?.status, 'done');
    assert.equal(after?.attempts, 2, 'the crashed claim counted as an attempt');
    assert.equal(after?.leaseOwner, null);
  });

  it('marks a job failed when its worker died on the last attempt', async () => {
    const kind = `lastcrash-${randomBytes(3).toString('hex')}`;
    const job = await enqueueJob(db, kind, {}, { maxAttempts: 1 });
    await claimJob(db, 'dead-worker', [kind], 50);
    await sleep(150);
    const [survivor] = workers(1);
    survivor!.register(kind, async () => assert.fail('a job out of attempts must not run again'));
    assert.equal(await survivor!.runOnce(), false);
    const after = await findJob(db, job.id);
    assert.equal(after?.status, 'failed');
    assert.match(after?.lastError ?? '', /lost its lease on the last attempt/);
  });

  it('retries a failing job with backoff and marks it failed after maxAttempts', async () => {
    const kind = `fail-${randomBytes(3).toString('hex')}`;
    // Backoff of a second: the 'not due yet' check must come within the first delay, which a
    // loaded machine's pause between two statements could outlast at 200 ms.
    const [jobs] = workers(1, { backoffMs: 1_000 });
    let calls = 0;
    jobs!.register(kind, async () => {
      calls += 1;
      throw new Error(`boom ${calls}`);
    });
    const job = await jobs!.enqueue(kind, {}, { maxAttempts: 3 });
    assert.equal(await jobs!.runOnce(), true);
    let row = await findJob(db, job.id);
    assert.equal(row?.status, 'queued');
    assert.equal(row?.lastError, 'boom 1');
    const firstDelay = row!.runAfter.getTime() - row!.updatedAt.getTime();
    assert.ok(firstDelay >= 990 && firstDelay <= 1_010, `first retry after ~1000 ms, got ${firstDelay}`);
    assert.equal(await jobs!.runOnce(), false, 'not due yet');
    await sleep(1_050);
    assert.equal(await jobs!.runOnce(), true);
    row = await findJob(db, job.id);
    const secondDelay = row!.runAfter.getTime() - row!.updatedAt.getTime();
    assert.ok(secondDelay >= 1_990 && secondDelay <= 2_010, `second retry after ~2000 ms, got ${secondDelay}`);
    await sleep(2_050);
    assert.equal(await jobs!.runOnce(), true);
    row = await findJob(db, job.id);
    assert.equal(calls, 3);
    assert.equal(row?.status, 'failed');
    assert.equal(row?.lastError, 'boom 3');
    assert.ok(row?.finishedAt instanceof Date);
    await sleep(450);
    assert.equal(await jobs!.runOnce(), false, 'a failed job is not run again');
  });

  it('returns the queued job for a duplicate dedupe key, and a new one once it is done', async () => {
    const kind = `dedupe-${randomBytes(3).toString('hex')}`;
    const first = await enqueueJob(db, kind, { v: 1 }, { dedupeKey: `${kind}:a` });
    const again = await enqueueJob(shared.dbs[2]!, kind, { v: 2 }, { dedupeKey: `${kind}:a` });
    assert.equal(again.id, first.id);
    assert.deepEqual(again.payload, { v: 1 });
    const [jobs] = workers(1);
    jobs!.register(kind, async () => null);
    await jobs!.runOnce();
    const later = await enqueueJob(db, kind, { v: 3 }, { dedupeKey: `${kind}:a` });
    assert.notEqual(later.id, first.id);
  });

  it('prunes finished jobs older than the retention, never queued or running ones', async () => {
    const kind = `prune-${randomBytes(3).toString('hex')}`;
    const [jobs] = workers(1);
    jobs!.register(kind, async () => 'ok');
    const finished = await jobs!.enqueue(kind, {});
    await jobs!.runOnce();
    const queued = await enqueueJob(db, kind, {}, { runAfter: new Date(Date.now() + 3_600_000) });
    await sleep(50);
    assert.ok((await pruneFinishedJobs(db, 10)) >= 1);
    assert.equal(await findJob(db, finished.id), undefined);
    assert.equal((await findJob(db, queued.id))?.status, 'queued');
  });

  it('the background loop runs an enqueued job and close() hands a running job back', async () => {
    const kind = `loop-${randomBytes(3).toString('hex')}`;
    const [jobs] = workers(1);
    let started!: () => void;
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    jobs!.register(kind, ({ signal }) => {
      started();
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    });
    jobs!.start();
    const job = await jobs!.enqueue(kind, {});
    await startedPromise;
    await jobs!.close();
    const row = await findJob(db, job.id);
    assert.equal(row?.status, 'queued', 'released for another worker');
    assert.equal(row?.attempts, 0);
  });

  it('start({ firstPollMs }) leaves queued jobs until the first poll, and an enqueue still wakes the loop at once', async (t) => {
    const kind = `first-poll-${randomBytes(3).toString('hex')}`;
    const [jobs] = workers(1);
    const ran: string[] = [];
    let second!: () => void;
    const secondRan = new Promise<void>((resolve) => (second = resolve));
    jobs!.register(kind, async ({ job }) => {
      ran.push(job.id);
      if (ran.length === 2) second();
      return {};
    });
    const early = await jobs!.enqueue(kind, {});
    // The worker's clock only (setImmediate and the database stay real).
    t.mock.timers.enable({ apis: ['setTimeout'] });
    jobs!.start({ firstPollMs: 1_000 });
    t.mock.timers.tick(999);
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(ran, [], 'no sweep before the first poll is due');
    assert.equal((await findJob(db, early.id))?.status, 'queued');
    // The real clock from here on, the first poll still a second away: a job enqueued now wakes the loop, which takes the early one with it.
    t.mock.timers.reset();
    const late = await jobs!.enqueue(kind, {});
    await secondRan;
    assert.deepEqual(new Set(ran), new Set([early.id, late.id]));
  });
});

it('retry delays double from the base and stop at the cap', () => {
  assert.deepEqual([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, 100, 500)), [100, 200, 400, 500]);
});
