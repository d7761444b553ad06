/**
 * The ordering contract of install crash recovery at start (issue #18 finding 8), kept while it
 * moved off the way to ready (issue #28: it now runs while the app's parts are built): by the
 * time `createApp` resolves, an install whose owner died is rolled back, row and folders, so
 * nothing served, installed or launched afterwards can meet it.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { reservePluginInstall } from '../../src/store/repositories/plugin-install-leases.ts';
import { INSTALL_LEASE_SECONDS } from '../../src/plugins/recovery.ts';
import { STAGING_OWNER_FILE } from '../../src/plugins/installer.ts';
import { deadOwner } from './helpers.ts';

describeEachBackend('install crash recovery at start', (backend) => {
  let root: string;
  let app: App | undefined;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-recovery-start-'));
  });
  after(async () => {
    await app?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('has rolled back an interrupted install, row and folders, when createApp resolves', async () => {
    const db = await backend.open();
    const home = join(root, 'home');
    const dead = await deadOwner();
    const cache = join(home, 'plugins', 'git', 'deadbeef');
    await mkdir(cache, { recursive: true });
    await writeFile(join(cache, 'server.mjs'), '');
    await reservePluginInstall(db, { name: 'crashed', sourceType: 'git', source: { cachePath: cache }, owner: dead, leaseSeconds: INSTALL_LEASE_SECONDS });
    const staging = join(home, 'plugins', '.staging', 'git-crashed');
    await mkdir(join(staging, 'tree'), { recursive: true });
    await writeFile(join(staging, STAGING_OWNER_FILE), JSON.stringify(dead));

    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });

    const rows = await db.query<{ name: string }>(`SELECT name FROM plugins WHERE name = 'crashed'`);
    assert.deepEqual(rows.rows, [], 'the reserved row of the dead install is gone');
    assert.ok(!existsSync(cache), 'its cache folder is removed');
    assert.ok(!existsSync(staging), 'its staging folder is removed');
  });
});
