/**
 * Issue #18 finding 4: a plugin's files are read without following links out of its tree.
 * Real git repositories (with committed symbolic links) and real folders whose package.json,
 * quiver.json or entry point link to host files this test creates: the install is refused,
 * nothing is left behind, and no byte of the linked files reaches the catalog, the error or
 * the logs. A link that stays inside the plugin keeps working.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError, type QuiverError } from '../../src/core/errors.ts';
import { createCapturingLogger, createHarness, createPluginFolder, createPluginRepo, openTempDir, type PluginsHarness } from './helpers.ts';

const HOST_DESCRIPTION = 'HOST-ONLY description that must never reach the catalog';
const HOST_VERSION = '77.66.55';
const SHADOW_LINE = 'root:$6$hostsalt$HOSTONLYHASHVALUE:19000:0:99999:7:::';

describeEachBackend('plugin source files never followed out of their tree', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let logger: ReturnType<typeof createCapturingLogger>;
  let root: string;
  let hostJson: string;
  let hostShadow: string;

  before(async () => {
    db = await backend.open();
    logger = createCapturingLogger();
    harness = await createHarness(db, { logger, discoveryTimeoutMs: 10_000 });
    root = await openTempDir('source-links');
    // Host files the plugin must never read: a JSON file that would make a valid package.json
    // (with an entry point the plugin really has), and a shadow-like file.
    hostJson = join(root, 'host', 'host.json');
    hostShadow = join(root, 'host', 'shadow');
    await createPluginFolder(root, 'bare', '../host');
    await writeFile(hostJson, JSON.stringify({ name: 'host', description: HOST_DESCRIPTION, version: HOST_VERSION, main: 'server.mjs' }));
    await writeFile(hostShadow, `${SHADOW_LINE}\n`);
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  /**
   * Expects install_failed at one of `steps` (a git tree is read first by its dependency and
   * build step, source-build.ts, then by validation and launch), with nothing of the host files anywhere.
   */
  async function expectRefused(
    work: () => Promise<unknown>,
    steps: string | string[],
    name: string,
    message: RegExp = /leads outside the plugin's folder/,
  ): Promise<QuiverError> {
    let caught: unknown;
    try {
      await work();
    } catch (error) {
      caught = error;
    }
    assert.ok(isQuiverError(caught, 'install_failed'), `expected install_failed, got ${String(caught)}`);
    assert.ok([steps].flat().includes((caught.details as { step: string }).step), caught.message);
    assert.match(caught.message, message);
    const everything = JSON.stringify({ message: caught.message, details: caught.details }) + logger.lines.join('\n');
    for (const secret of [HOST_DESCRIPTION, HOST_VERSION, 'HOSTONLYHASHVALUE', 'root:$6$']) {
      assert.ok(!everything.includes(secret), `'${secret}' leaked: ${everything}`);
    }
    const rows = await db.query('SELECT id FROM plugins WHERE name = $1', [name]);
    assert.equal(rows.rows.length, 0, 'no plugin row');
    const catalog = await db.query<{ text: string }>(`SELECT coalesce(string_agg(description || ' ' || coalesce(version, ''), ' '), '') AS text FROM plugins`);
    assert.ok(!catalog.rows[0]!.text.includes(HOST_DESCRIPTION) && !catalog.rows[0]!.text.includes(HOST_VERSION));
    const staging = join(harness.cacheDir, '.staging');
    assert.deepEqual(existsSync(staging) ? await readdir(staging) : [], [], 'staging cleaned');
    return caught;
  }

  it('git: a committed package.json linked to a host JSON file is refused', async () => {
    const repo = await createPluginRepo(root, 'bare', { name: 'linked-package' });
    await repo.commitLinks({ 'package.json': hostJson }, 'package.json is a link to a host file');
    await expectRefused(() => harness.plugins.add(repo.remote, { name: 'linked-package' }), ['dependencies', 'validation'], 'linked-package');
  });

  it('git: a quiver.json linked to a shadow-like file is refused without quoting it; a relative link out too', async () => {
    const repo = await createPluginRepo(root, 'calc', { name: 'linked-quiver' });
    await repo.commitLinks({ 'quiver.json': hostShadow }, 'quiver.json is a link to a host file');
    const error = await expectRefused(() => harness.plugins.add(repo.remote, { name: 'linked-quiver' }), 'validation', 'linked-quiver');
    assert.match(error.message, /quiver\.json leads outside/);

    const relative = await createPluginRepo(root, 'calc', { name: 'relative-quiver' });
    await relative.commitLinks({ 'quiver.json': `../../../../../../../../../../..${hostShadow}` }, 'a relative link climbing out');
    await expectRefused(() => harness.plugins.add(relative.remote, { name: 'relative-quiver' }), 'validation', 'relative-quiver');
  });

  it('git: an entry point linked out of the tree is refused before it can run', async () => {
    const repo = await createPluginRepo(root, 'bare', { name: 'linked-entry' });
    await repo.commitLinks({ 'server.mjs': join(root, 'host', 'server.mjs') }, 'the entry point is a link to a host file');
    // The build step (source-build.ts) sees the link out as no entry point at all; launch says it leads outside.
    await expectRefused(() => harness.plugins.add(repo.remote, { name: 'linked-entry' }), ['build', 'launch'], 'linked-entry', /leads outside the plugin's folder|entry point server\.mjs is missing/);
  });

  it('folder: package.json and quiver.json linked to host files are refused', async () => {
    const folder = await createPluginFolder(root, 'bare', 'folder-package');
    await rm(join(folder, 'package.json'));
    await symlink(hostJson, join(folder, 'package.json'));
    await expectRefused(() => harness.plugins.add(folder, { name: 'folder-package' }), 'validation', 'folder-package');

    const calcFolder = await createPluginFolder(root, 'calc', 'folder-quiver');
    await rm(join(calcFolder, 'quiver.json'));
    await symlink(hostShadow, join(calcFolder, 'quiver.json'));
    await expectRefused(() => harness.plugins.add(calcFolder, { name: 'folder-quiver' }), 'validation', 'folder-quiver');
  });

  it('a bad quiver.json of the plugin itself is reported by position, not quoted', async () => {
    const folder = await createPluginFolder(root, 'calc', 'bad-json', { 'quiver.json': `${SHADOW_LINE}\n` });
    const error = await harness.plugins.add(folder, { name: 'bad-json' }).then(
      () => assert.fail('should fail'),
      (thrown: unknown) => thrown as QuiverError,
    );
    assert.ok(isQuiverError(error, 'install_failed'));
    assert.match(error.message, /quiver\.json is not valid JSON/);
    assert.ok(!error.message.includes('HOSTONLY') && !error.message.includes('root:'), error.message);
  });

  it('links that stay inside the plugin still work', async () => {
    const folder = await createPluginFolder(root, 'bare', 'inner-links');
    await rm(join(folder, 'package.json'));
    await writeFile(join(folder, 'real-package.json'), JSON.stringify({ name: 'inner', version: '1.2.3', description: 'Linked inside.', main: 'entry.mjs' }));
    await symlink('real-package.json', join(folder, 'package.json'));
    await symlink('server.mjs', join(folder, 'entry.mjs'));
    const report = await harness.plugins.add(folder, { name: 'inner-links' });
    assert.equal(report.plugin.description, 'Linked inside.');
    assert.equal(report.plugin.version, '1.2.3');
    assert.equal(report.tools.total, 5);
    await harness.plugins.remove('inner-links');
  });
});

describeEachBackend('npm packages that are links out of the install folder', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    root = await openTempDir('npm-links');
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('npm:file:<folder> (installed by npm as a link to the folder) is refused with what to do instead', async () => {
    const folder = await createPluginFolder(root, 'bare', 'linked-npm');
    const error = await harness.plugins.add(`npm:file:${folder}`, { name: 'linked-npm' }).then(
      () => assert.fail('should fail'),
      (thrown: unknown) => thrown as QuiverError,
    );
    assert.ok(isQuiverError(error, 'install_failed'), String(error));
    assert.equal((error.details as { step: string }).step, 'npm-install');
    assert.match(error.message, /install a local folder as a path source/);
    assert.equal((await db.query(`SELECT id FROM plugins WHERE name = 'linked-npm'`)).rows.length, 0);
  });
});
