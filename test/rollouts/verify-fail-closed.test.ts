/**
 * Issue #11 follow-up: a staged version whose verification cannot finish never takes traffic.
 * Real git tags, a real database (both backends), the real job queue and rollout service over
 * the app's plugins service and supervisor; the verifier is the one seam replaced, by one that
 * throws (the real pipeline does not throw on demand).
 * - The verifier throws on every attempt: the job retries it with backoff and its last attempt
 *   ends the rollout `rolled_back` with the verifier's error as reason; no session was ever
 *   routed to the canary and nothing was promoted.
 * - The job's worker dies on its last attempt (the queue then fails the job without running it
 *   again, so the handler cannot reject): the monitor's next pass rejects the rollout.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createJobs, type Jobs } from '../../src/jobs/index.ts';
import { claimJob, findJob } from '../../src/jobs/queue.ts';
import { createRolloutService, ROLLOUT_VERIFY_JOB, type RolloutService, type RolloutView, type VerifyStaged } from '../../src/rollouts/index.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createTaggedRepo, waitFor } from './helpers.ts';

describeEachBackend('a rollout whose verification job fails for good is rolled back, never promoted (issue #11)', (backend) => {
  let home: string;
  let app: App;
  let jobs: Jobs;
  let rollouts: RolloutService;
  const verifierCalls: string[] = [];

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-rollout-fail-closed-'));
    await chmod(home, 0o755);
    const remote = await createTaggedRepo(join(home, 'repo'), [
      { tag: 'v1.0.0', version: '1.0.0', tools: ['add', 'echo'] },
      { tag: 'v2.0.0', version: '2.0.0', tools: ['add', 'echo'] },
    ]);
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
    await app.plugins.add(remote, { name: 'calc', ref: 'v1.0.0' });
    const verifyStaged: VerifyStaged = async ({ version }) => {
      verifierCalls.push(version);
      throw new Error(`verifier crashed on attempt ${verifierCalls.length}`);
    };
    // Short backoff so three attempts take milliseconds; the worker is driven by hand (runOnce).
    jobs = createJobs({ db: app.db, backoffMs: 20, maxBackoffMs: 20, leaseMs: 5_000 });
    rollouts = createRolloutService({ db: app.db, plugins: app.plugins, supervisor: app.supervisor, verifyStaged, jobs, settings: { tickMs: 100 } });
  });
  after(async () => {
    await rollouts?.close();
    await jobs?.close();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Every one of 200 sessions is routed to the active version. */
  async function assertNothingRoutedToCanary(): Promise<void> {
    const stable = await app.plugins.upstreamSpec('calc');
    for (let index = 0; index < 200; index++) assert.equal(rollouts.route('calc', stable, `session-${index}`, 'add'), stable, 'a session was routed to an unverified canary');
  }

  async function ended(rolloutId: string): Promise<RolloutView | undefined> {
    const view = await rollouts.status('calc');
    const done = view.history.some((event) => event.rolloutId === rolloutId && event.kind === 'rolled_back');
    return view.rollout?.id === rolloutId && view.rollout.status !== 'verifying' && done ? view : undefined;
  }

  it('the verifier throws on every attempt: retried, then rolled back with its error as reason', async () => {
    const started = await rollouts.upgrade('calc', { ref: 'v2.0.0' });
    assert.equal(started.rollout.status, 'verifying');
    const view = await waitFor('rejection after the last attempt', async () => {
      await jobs.runOnce();
      await assertNothingRoutedToCanary();
      return ended(started.rollout.id);
    });
    assert.equal(verifierCalls.length, 3, `one verifier call per attempt, no more: ${verifierCalls.join(', ')}`);
    assert.equal(view.rollout?.status, 'rolled_back');
    assert.match(view.rollout?.reason ?? '', /^rejected by verification: verification of 2\.0\.0\S* failed to run: verifier crashed on attempt 3$/);
    const kinds = view.history.filter((event) => event.rolloutId === started.rollout.id).map((event) => event.kind).reverse();
    assert.deepEqual(kinds, ['started', 'rolled_back'], 'never verified, never promoted');
    assert.equal(view.slots.find((slot) => slot.status === 'failed')?.version.startsWith('2.0.0'), true, 'kept as failed');
    assert.equal((await app.plugins.show('calc')).plugin.version?.startsWith('1.0.0'), true, 'the installed version did not move');
    await assertNothingRoutedToCanary();
    const { rows } = await app.db.query<{ status: string; attempts: number }>(`SELECT status, attempts FROM jobs WHERE kind = $1`, [ROLLOUT_VERIFY_JOB]);
    assert.deepEqual(rows.map((row) => [row.status, Number(row.attempts)]), [['done', 3]]);
  });

  it("the job's worker dies on its last attempt: the monitor rolls the rollout back", async () => {
    const started = await rollouts.upgrade('calc', { ref: 'v2.0.0' });
    assert.equal(started.rollout.status, 'verifying');
    // A worker that claims the job and dies, three times (each lease runs out unrenewed).
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claimed = await waitFor(`claim ${attempt}`, () => claimJob(app.db, 'dead-worker', [ROLLOUT_VERIFY_JOB], 30));
      assert.equal(claimed.attempts, attempt);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    const calls = verifierCalls.length;
    // A live worker now finds the job out of attempts and fails it without running it.
    assert.equal(await jobs.runOnce(), false);
    const { rows } = await app.db.query<{ id: string }>(`SELECT id FROM jobs WHERE kind = $1 AND status = 'failed'`, [ROLLOUT_VERIFY_JOB]);
    assert.equal(rows.length, 1);
    assert.match((await findJob(app.db, rows[0]!.id))?.lastError ?? '', /worker lost its lease on the last attempt/);
    assert.equal(verifierCalls.length, calls, 'the handler did not run');
    assert.equal((await rollouts.status('calc')).rollout?.status, 'verifying', 'nothing has rejected it yet');
    await assertNothingRoutedToCanary();

    await rollouts.tick();
    const view = await waitFor('rejection by the monitor', () => ended(started.rollout.id));
    assert.equal(view.rollout?.status, 'rolled_back');
    assert.match(view.rollout?.reason ?? '', /^rejected by verification: the verification job failed for good \(4 attempts\): .*worker lost its lease on the last attempt/);
    assert.equal((await app.plugins.show('calc')).plugin.version?.startsWith('1.0.0'), true);
    await assertNothingRoutedToCanary();
  });
});
