/**
 * Start-up recovery of interrupted installs (issue #18 finding 8; issue #15): rows reserved by
 * a process that is gone are rolled back with their folders, a live owner's install (this
 * process, or another host whose lease still runs) is left alone, the rollback is idempotent
 * and safe to run from two replicas at once, a new `add` takes over an abandoned row, and no
 * install leaves a `state/installing-<uuid>` folder behind.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { processOwner, type ProcessOwner } from '../../src/store/process-owner.ts';
import { reservePluginInstall } from '../../src/store/repositories/plugin-install-leases.ts';
import { recoverInterruptedInstalls, INSTALL_LEASE_SECONDS } from '../../src/plugins/recovery.ts';
import { STAGING_OWNER_FILE } from '../../src/plugins/installer.ts';
import { createCapturingLogger, createHarness, createPluginFolder, deadOwner, openTempDir, type PluginsHarness } from './helpers.ts';

describeEachBackend('install crash recovery', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;
  let stateRoot: string;
  const logger = createCapturingLogger();

  const names = async (): Promise<string[]> => (await db.query<{ name: string }>(`SELECT name FROM plugins WHERE status <> 'removed' ORDER BY name`)).rows.map((row) => row.name);
  const recover = () => recoverInterruptedInstalls({ db, cacheDir: harness.cacheDir, stateRoot, logger });

  before(async () => {
    db = await backend.open();
    root = await openTempDir('recovery');
    stateRoot = join(root, 'state');
    harness = await createHarness(db, { stateRoot, discoveryTimeoutMs: 10_000 });
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('leaves no state/installing-<uuid> folder and no staging folder behind, on success or failure', async () => {
    const calc = await createPluginFolder(root, 'calc', 'calc');
    await harness.plugins.add(calc, { name: 'calc' });
    const crash = await createPluginFolder(root, 'crash', 'crash');
    await assert.rejects(harness.plugins.add(crash, { name: 'crash' }), (error: unknown) => isQuiverError(error, 'install_failed'));
    // Discovery did run in a sandbox with a state folder: not under the supervisor's state root.
    assert.deepEqual((await readdir(stateRoot).catch(() => [])).filter((name) => name.startsWith('installing-')), []);
    assert.deepEqual(await readdir(join(harness.cacheDir, '.staging')), []);
    assert.deepEqual(await names(), ['calc']);
    await harness.plugins.remove('calc');
  });

  it('rolls back rows and folders whose owner is gone, and only those', async () => {
    const dead = await deadOwner();
    const self = processOwner()!;
    const otherHost = { host: 'another-replica', pid: 4242, startTicks: 1 };
    const deadCache = join(harness.cacheDir, 'git', 'deadbeef');
    await mkdir(deadCache, { recursive: true });
    await writeFile(join(deadCache, 'server.mjs'), '');
    const reserve = (name: string, owner: ProcessOwner, source: Record<string, unknown> = {}) =>
      reservePluginInstall(db, { name, sourceType: 'git', source, owner, leaseSeconds: INSTALL_LEASE_SECONDS });
    await reserve('dead-owner', dead, { cachePath: deadCache });
    await reserve('live-owner', self);
    await reserve('other-host-live', otherHost);
    const expired = await reserve('other-host-expired', otherHost);
    await db.query(`UPDATE plugins SET install_lease_until = now() - interval '1 second' WHERE id = $1`, [expired]);
    const legacy = await reserve('legacy-row', self);
    await db.query(`UPDATE plugins SET install_owner = NULL, install_lease_until = NULL, updated_at = now() - interval '1 hour' WHERE id = $1`, [legacy]);
    const unownedFresh = await reserve('legacy-fresh', self);
    await db.query('UPDATE plugins SET install_owner = NULL, install_lease_until = NULL WHERE id = $1', [unownedFresh]);

    // Staging folders: a dead owner's, a live one's, an old unowned one, a fresh unowned one.
    const staging = join(harness.cacheDir, '.staging');
    const stage = async (name: string, owner: ProcessOwner | undefined) => {
      await mkdir(join(staging, name, 'tree'), { recursive: true });
      if (owner !== undefined) await writeFile(join(staging, name, STAGING_OWNER_FILE), JSON.stringify(owner));
    };
    await stage('git-dead', dead);
    await stage('git-live', self);
    await stage('git-other-host', otherHost);
    await stage('git-unowned-old', undefined);
    await utimes(join(staging, 'git-unowned-old'), new Date(0), new Date(0));
    await stage('git-unowned-fresh', undefined);
    await mkdir(join(stateRoot, 'installing-0b7e'), { recursive: true });
    await mkdir(join(stateRoot, 'a-real-plugin-id'), { recursive: true });

    // Two replicas recovering at once: each row is rolled back exactly once, nobody fails.
    const [first, second] = await Promise.all([recover(), recover()]);
    assert.deepEqual([...first.plugins, ...second.plugins].sort(), ['dead-owner', 'legacy-row', 'other-host-expired']);
    assert.deepEqual(await names(), ['legacy-fresh', 'live-owner', 'other-host-live']);
    assert.ok(!existsSync(deadCache), 'the dead install placed its cache folder: removed');
    assert.deepEqual((await readdir(staging)).sort(), ['git-live', 'git-other-host', 'git-unowned-fresh']);
    assert.deepEqual(await readdir(stateRoot), ['a-real-plugin-id']);
    assert.ok(logger.lines.some((line) => line.includes('rolled back an install interrupted by a crash') && line.includes('dead-owner')));

    // Idempotent: nothing more to do.
    assert.deepEqual(await recover(), { plugins: [], folders: [] });
    await db.query(`DELETE FROM plugins WHERE name IN ('legacy-fresh', 'live-owner', 'other-host-live')`);
    await rm(staging, { recursive: true, force: true });
  });

  it('a new add takes over an abandoned row, and refuses one a live install holds', async () => {
    const calc = await createPluginFolder(root, 'calc', 'calc-again');
    await reservePluginInstall(db, { name: 'calc-again', sourceType: 'path', source: {}, owner: await deadOwner(), leaseSeconds: INSTALL_LEASE_SECONDS });
    const report = await harness.plugins.add(calc, { name: 'calc-again' });
    assert.equal(report.plugin.status, 'active');
    const { rows } = await db.query<{ install_owner: unknown }>(`SELECT install_owner FROM plugins WHERE name = 'calc-again'`);
    assert.deepEqual(rows, [{ install_owner: null }], 'the finished install holds no lease');

    await reservePluginInstall(db, { name: 'busy', sourceType: 'path', source: {}, owner: { host: 'another-replica', pid: 7, startTicks: 1 }, leaseSeconds: INSTALL_LEASE_SECONDS });
    await assert.rejects(harness.plugins.add(calc, { name: 'busy' }), (error: unknown) => isQuiverError(error, 'conflict') && /being installed by another process/.test(error.message));
    assert.deepEqual((await db.query(`SELECT status FROM plugins WHERE name = 'busy'`)).rows, [{ status: 'failed' }]);
    await harness.plugins.remove('calc-again');
  });

  it('a second add of a name being installed fails at once with conflict', async () => {
    const folder = await createPluginFolder(root, 'hang', 'slow');
    const first = harness.plugins.add(folder, { name: 'slow' });
    // The reservation is the first write: wait for it (the install then hangs in discovery).
    for (let found = false; !found; ) {
      found = (await db.query(`SELECT 1 FROM plugins WHERE name = 'slow'`)).rows.length === 1;
      if (!found) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await assert.rejects(harness.plugins.add(folder, { name: 'slow' }), (error: unknown) => isQuiverError(error, 'conflict'));
    await assert.rejects(first, (error: unknown) => isQuiverError(error, 'install_failed'));
    assert.ok(!(await names()).includes('slow'), 'the failed install released its row');
  });
});
