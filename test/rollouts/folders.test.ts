/**
 * Every version folder accounted for (issue #29), with a real plugin from real git tags on each
 * database, the app's own data folder (PGlite) or a scratch PostgreSQL database:
 * - ten upgrades with promotions and rollbacks between them, swept now and then (also during an
 *   open rollout): after each sweep exactly the folders in use remain on disk, every folder that
 *   went has a `folder` line in the history, and `quiver plugin show` reports the bytes `du -sb`
 *   counts for the folders that remain;
 * - `plugin update` after a promotion: the active slot follows what is installed at once, the
 *   replaced folders go at the next sweep;
 * - removal during an open rollout: the slot, rollout and history rows go at once, the folders
 *   with the sweep (run as its periodic job); nothing of the plugin is left behind.
 * Retention and recent-call windows are 0 here (production keeps failed slots for 7 days).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { FOLDER_SWEEP_JOB } from '../../src/rollouts/index.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { runInProcess } from '../helpers/cli.ts';
import { createTaggedRepo, waitFor } from './helpers.ts';

const run = promisify(execFile);
const TAGS = ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7'];

/** Folder names below `<cache>/<kind>`, sorted (none when the kind folder does not exist). */
async function listed(folder: string): Promise<string[]> {
  return (await readdir(folder).catch(() => [] as string[])).sort();
}

describeEachBackend('version folders of a plugin (issue #29)', (backend) => {
  let home: string;
  let remote: string;
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  let app: App;
  const cache = () => join(home, 'plugins');
  const gitFolders = async () => (await listed(join(cache(), 'git'))).map((name) => join(cache(), 'git', name));

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-folders-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    remote = await createTaggedRepo(
      join(home, 'repo'),
      TAGS.map((tag, index) => ({ tag, version: `${index + 1}.0.0`, tools: ['add', 'echo'] })),
    );
    const store = await processStore(backend);
    drop = store.drop;
    env = {
      QUIVER_HOME: home,
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_VERIFY_ON_INSTALL: 'off',
      QUIVER_ROLLOUT_FOLDER_RETENTION_MS: '0',
      QUIVER_ROLLOUT_RECENT_CALL_MS: '0',
      QUIVER_ROLLOUT_SWEEP_INTERVAL_MS: '60000',
      ...store.env,
    };
    app = await createApp(loadConfig(env));
    await app.plugins.add(remote, { name: 'calc', ref: 'v1' });
  });
  after(async () => {
    await app?.close();
    await drop?.();
    await rm(home, { recursive: true, force: true });
  });

  /** The folders the database says are in use: the installed version's and every slot of an open rollout, active or canary. */
  async function inUse(): Promise<string[]> {
    const { rows } = await app.db.query<{ folder: string }>(
      `SELECT source->>'cachePath' AS folder FROM plugins WHERE status <> 'removed' AND source->>'cachePath' IS NOT NULL
       UNION SELECT folder FROM deployments WHERE status IN ('active', 'canary') AND folder IS NOT NULL`,
    );
    return [...new Set(rows.map((row) => row.folder))].sort();
  }

  /** Sweeps once the processes of versions that left service have stopped (a running one rightly keeps its folder). */
  async function sweep() {
    const view = await app.rollouts.status('calc');
    const serving = new Set(view.slots.filter((slot) => slot.status === 'active' || slot.status === 'canary').flatMap((slot) => [slot.runtimeVersion, slot.version]));
    await waitFor('retired processes to stop', async () => (app.supervisor.processes().every((process) => serving.has(process.version)) ? true : undefined), 30_000);
    return app.rollouts.sweep();
  }

  it('ten upgrades with promotions and rollbacks: after each sweep exactly the folders in use remain, each removal is in the history, and plugin show matches du', async () => {
    const seen = new Set<string>(await gitFolders());
    const plan: Array<[string, 'promote' | 'rollback']> = [
      ['v2', 'promote'],
      ['v3', 'rollback'],
      ['v4', 'promote'],
      ['v5', 'rollback'],
      ['v3', 'promote'],
      ['v6', 'rollback'],
      ['v2', 'promote'],
      ['v7', 'promote'],
      ['v5', 'rollback'],
      ['v4', 'promote'],
    ];
    let sweeps = 0;
    for (const [index, [ref, move]] of plan.entries()) {
      await app.rollouts.upgrade('calc', { ref });
      for (const folder of await gitFolders()) seen.add(folder);
      if (index === 4) {
        // During an open rollout both the active and the canary folder stay.
        const report = await sweep();
        sweeps++;
        assert.deepEqual(await gitFolders(), await inUse(), JSON.stringify(report));
        assert.equal((await inUse()).length, 2, 'an open rollout uses two folders');
      }
      if (move === 'promote') await app.rollouts.promote('calc');
      else await app.rollouts.rollback('calc', 'test rollback');
      if (index % 3 === 2) {
        const report = await sweep();
        sweeps++;
        assert.deepEqual(await gitFolders(), await inUse(), `after upgrade ${index + 1}: ${JSON.stringify(report)}`);
      }
    }
    const final = await sweep();
    sweeps++;
    assert.ok(sweeps >= 4);
    const remaining = await gitFolders();
    const record = await app.plugins.show('calc');
    assert.deepEqual(remaining, [record.plugin.source['cachePath']], `only the installed version's folder remains: ${JSON.stringify(final)}`);
    assert.deepEqual(await listed(join(cache(), '.trash')), [], 'nothing left in the trash');
    assert.ok(seen.size >= 7, `the run made a folder per version it fetched (${seen.size})`);

    // Every folder that went is accounted for in the history.
    const { rows } = await app.db.query<{ details: { action: string; folder: string } }>(`SELECT details FROM plugin_rollout_events WHERE kind = 'folder'`);
    const removed = new Set(rows.filter((row) => row.details.action === 'removed').map((row) => row.details.folder));
    for (const folder of seen) {
      if (!remaining.includes(folder)) assert.ok(removed.has(folder), `${folder} went without a history line`);
    }
    const released = rows.filter((row) => row.details.action === 'released');
    assert.ok(released.length > 0, 'overwritten slots recorded their outgoing folders');

    // plugin show (the CLI, its own process view of the same store) reports what du counts.
    await app.close();
    const shown = await runInProcess(['plugin', 'show', 'calc', '--json'], env);
    assert.equal(shown.code, 0, shown.stderr);
    const disk = (JSON.parse(shown.stdout) as { disk: { bytes: number; folders: Array<{ path: string; exists: boolean }> } }).disk;
    assert.deepEqual(disk.folders.filter((folder) => folder.exists).map((folder) => folder.path).sort(), remaining);
    const du = await run('du', ['-sbc', ...remaining]);
    const total = Number(/^(\d+)\s+total$/m.exec(du.stdout)?.[1]);
    assert.equal(disk.bytes, total, du.stdout);
    const text = await runInProcess(['plugin', 'show', 'calc'], env);
    assert.match(text.stdout, new RegExp(`disk: ${total} bytes in 1 folder`));
    app = await createApp(loadConfig(env));
  });

  it('plugin update after a promotion: the active slot follows the install and the replaced folders go', async () => {
    await app.rollouts.upgrade('calc', { ref: 'v6' });
    await app.rollouts.promote('calc');
    await app.plugins.update('calc', { ref: 'v7' });
    // At once, not only at the next sweep: the app's plugin service reconciles after an update.
    const view = await app.rollouts.status('calc');
    const active = view.slots.find((slot) => slot.status === 'active');
    assert.match(active?.version ?? '', /^7\.0\.0\b/, JSON.stringify(view.slots));
    const report = await sweep();
    assert.deepEqual(report.reconciled, [], 'nothing left to reconcile');
    const lines = (await app.rollouts.status('calc')).history.filter((event) => event.kind === 'folder' && event.details['action'] === 'released');
    assert.ok(lines.some((event) => /updated outside a rollout/.test(event.message)), 'the replaced folder is recorded as released');
    assert.deepEqual(await gitFolders(), await inUse());
    assert.equal((await gitFolders()).length, 1);
  });

  it('removal during an open rollout: the sweep job leaves no folder and no row of the plugin', async () => {
    const id = (await app.plugins.show('calc')).plugin.id;
    await app.rollouts.upgrade('calc', { ref: 'v2' });
    assert.equal((await gitFolders()).length, 2);
    await app.plugins.remove('calc');
    const { rows: slots } = await app.db.query('SELECT 1 FROM deployments WHERE plugin_id = $1', [id]);
    assert.equal(slots.length, 0, 'the slots go with the removal');
    // The folders go with the periodic job, as a server's worker runs it.
    const job = await app.jobs.enqueue(FOLDER_SWEEP_JOB, {}, { dedupeKey: `every:${FOLDER_SWEEP_JOB}` });
    await waitFor('the sweep job', async () => {
      await app.jobs.runOnce();
      const state = await app.jobs.get(job.id);
      return state?.status === 'done' || state?.status === 'failed' ? state : undefined;
    }, 60_000).then((state) => assert.equal(state.status, 'done', JSON.stringify(state)));
    assert.deepEqual(await gitFolders(), []);
    assert.deepEqual(await listed(join(cache(), '.trash')), []);
    for (const table of ['deployments', 'plugin_rollouts', 'plugin_rollout_events']) {
      const { rows } = await app.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE plugin_id = $1`, [id]);
      assert.equal(Number(rows[0]?.n), 0, `${table} rows left`);
    }
  });
});
