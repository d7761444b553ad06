/**
 * Installing plugins from real git repositories (built here with real git), discovering them
 * over MCP in the sandbox, updating, surviving the loss of the remote, removing — and every
 * failing install leaving no row, no catalog entry and no cache folder behind.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError, type QuiverError } from '../../src/core/errors.ts';
import { calcFixtureWith, createHarness, createPluginRepo, openTempDir, type PluginRepo, type PluginsHarness } from './helpers.ts';
import { skipUnless } from '../helpers/requirements.ts';

/** Runs `work`, expecting an install_failed at `step`; returns the error. */
async function expectInstallFailure(work: () => Promise<unknown>, step: string): Promise<QuiverError> {
  try {
    await work();
  } catch (error) {
    assert.ok(isQuiverError(error, 'install_failed'), `expected install_failed, got ${(error as Error).message}`);
    assert.equal((error.details as { step: string }).step, step, error.message);
    return error;
  }
  assert.fail('the install should have failed');
}

describeEachBackend('plugins from git', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;
  let calc: PluginRepo;

  async function cacheEntries(): Promise<string[]> {
    return existsSync(harness.cacheDir) ? (await readdir(harness.cacheDir, { recursive: true })).sort() : [];
  }

  /** A failed install leaves nothing: no row, no tools, no new cache folder, an empty staging folder. */
  async function assertNothingLeft(name: string, cacheBefore: string[]): Promise<void> {
    const plugins = await db.query('SELECT id FROM plugins WHERE name = $1', [name]);
    assert.equal(plugins.rows.length, 0, `plugin row '${name}' left behind`);
    const tools = await db.query('SELECT t.id FROM tools t JOIN plugins p ON p.id = t.plugin_id WHERE p.name = $1', [name]);
    assert.equal(tools.rows.length, 0);
    const after = (await cacheEntries()).filter((entry) => entry !== '.staging');
    assert.deepEqual(after, cacheBefore.filter((entry) => entry !== '.staging'), 'the cache folder changed');
    assert.ok(!after.some((entry) => entry.startsWith('.staging/')), 'staging not cleaned');
  }

  before(async () => {
    db = await backend.open();
    // Short enough for the hanging server's case below, long enough for a sandboxed start and
    // listing on a loaded machine (about a second here).
    harness = await createHarness(db, { discoveryTimeoutMs: 10_000 });
    root = await openTempDir('git-plugins');
    calc = await createPluginRepo(root, 'calc', { tag: 'v1.0.0' });
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('installs at a tag into a cache keyed by commit, with the manifest merged into the catalog', async () => {
    const first = await calc.head();
    const report = await harness.plugins.add(calc.remote, { ref: 'v1.0.0' });
    assert.equal(report.plugin.name, 'calc');
    assert.equal(report.plugin.sourceType, 'git');
    assert.equal(report.plugin.source['commit'], first);
    assert.equal(report.plugin.source['refKind'], 'tag');
    assert.equal(report.plugin.source['cachePath'], join(harness.cacheDir, 'git', first));
    assert.ok(existsSync(join(harness.cacheDir, 'git', first, 'server.mjs')));
    assert.ok(!existsSync(join(harness.cacheDir, 'git', first, '.git')), 'the cached tree holds no repository');
    assert.deepEqual(report.tools.inserted.sort(), ['add', 'echo']);
    assert.deepEqual(report.enabledIn, { workspace: 'default', project: null });
    // The soft rule of seed 002 (uppercase tag) is a stored warning, not a failure.
    assert.ok(report.plugin.manifestWarnings.some((warning) => warning.includes("'Arithmetic'")));
    assert.equal((report.plugin.discovery['sandbox'] as { sandboxed: boolean; network: string }).network, 'none');

    const tools = await harness.plugins.tools('calc');
    const add = tools.find((tool) => tool.name === 'add')!;
    assert.equal(add.qualifiedName, 'calc__add');
    assert.deepEqual(add.exampleQueries, ['What is 2 plus 3?']);
    assert.ok(add.whenToUse.includes('When the user asks to add two numbers.'));
    assert.equal(add.categoryName, 'data');
    const effective = await harness.plugins.effectiveTools();
    assert.deepEqual(effective.map((tool) => tool.qualifiedName).sort(), ['calc__add', 'calc__echo']);
  });

  it('refuses a second plugin of the same name, and installs a copy under --name at a commit pin', async () => {
    const error = await harness.plugins.add(calc.remote).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    assert.ok(isQuiverError(error, 'conflict'), String(error));
    const pinned = await calc.head();
    const report = await harness.plugins.add(calc.remote, { name: 'calc-pinned', ref: pinned.slice(0, 10) });
    assert.equal(report.plugin.source['commit'], pinned);
    assert.equal(report.plugin.source['refKind'], 'commit');
    // Both share one content-addressed folder.
    assert.equal(report.plugin.source['cachePath'], join(harness.cacheDir, 'git', pinned));
    await harness.plugins.remove('calc-pinned');
    assert.ok(existsSync(join(harness.cacheDir, 'git', pinned)), "a folder another plugin uses survives the removal");
  });

  it('updates to a new tag differentially, keeps working without the remote, and removes cleanly', async () => {
    const before = (await harness.plugins.show('calc')).plugin;
    const oldCache = before.source['cachePath'] as string;
    const next = await calc.commit({ 'fixture.json': calcFixtureWith([{ name: 'multiply', description: 'Multiply two numbers.', op: 'product' }]) }, 'add multiply', { tag: 'v1.1.0' });

    const report = await harness.plugins.update('calc', { ref: 'v1.1.0' });
    assert.deepEqual(report.tools.inserted, ['multiply']);
    assert.equal(report.tools.unchanged, 2);
    assert.equal(report.plugin.source['commit'], next);
    assert.ok(!existsSync(oldCache), 'the old cache folder is removed once the new one is in use');
    assert.ok(existsSync(join(harness.cacheDir, 'git', next)));

    // The hub never needs the remote again (seed 003): delete it, then re-discover and call a tool.
    await rm(calc.remote, { recursive: true, force: true });
    const synced = await harness.plugins.sync('calc');
    assert.equal(synced.tools.unchanged, 3);
    assert.equal(synced.tools.inserted.length + synced.tools.updated.length, 0);
    const spec = await harness.plugins.upstreamSpec('calc');
    const result = await harness.supervisor.callTool(spec, 'multiply', { a: 6, b: 7 });
    assert.deepEqual(result.content, [{ type: 'text', text: '42' }]);

    // Update fails cleanly when the remote is gone: nothing changes.
    await expectInstallFailure(() => harness.plugins.update('calc'), 'clone');
    assert.equal((await harness.plugins.show('calc')).plugin.source['commit'], next);
    assert.equal((await harness.plugins.tools('calc')).length, 3);

    await harness.plugins.remove('calc');
    assert.ok(!existsSync(join(harness.cacheDir, 'git', next)));
    const { rows } = await db.query<{ status: string; live: number }>(
      `SELECT p.status, (SELECT count(*)::int FROM tools t WHERE t.plugin_id = p.id AND t.deleted_at IS NULL) AS live
         FROM plugins p WHERE p.name = 'calc'`,
    );
    assert.deepEqual(rows, [{ status: 'removed', live: 0 }]);
    assert.deepEqual(await harness.plugins.effectiveTools(), []);
    assert.equal((await harness.plugins.list()).some((plugin) => plugin.name === 'calc'), false);
  });

  it('follows a branch and moves with it on update', async () => {
    const repo = await createPluginRepo(root, 'calc', { name: 'calc-branchy' });
    await repo.commit({ 'fixture.json': calcFixtureWith([{ name: 'shout', description: 'Echo louder.', op: 'echo' }]) }, 'next', { branch: 'next' });
    const report = await harness.plugins.add(repo.remote, { name: 'branchy', ref: 'next' });
    assert.equal(report.plugin.source['refKind'], 'branch');
    assert.equal(report.tools.total, 3);
    await repo.commit({ 'fixture.json': calcFixtureWith([]) }, 'drop shout', { branch: 'next' });
    const updated = await harness.plugins.update('branchy');
    assert.deepEqual(updated.tools.deleted, ['shout']);
    await harness.plugins.remove('branchy');
  });

  it('discovers a plugin with no quiver.json over MCP, following tools/list pages', async () => {
    const repo = await createPluginRepo(root, 'bare');
    const report = await harness.plugins.add(repo.remote);
    assert.equal(report.plugin.name, 'bare');
    assert.equal(report.plugin.manifest, null);
    assert.deepEqual(report.tools.inserted.sort(), ['alpha', 'beta', 'delta', 'epsilon', 'gamma']);
    assert.equal(report.plugin.description, 'A plugin with no quiver.json, discovered over MCP.');
    assert.deepEqual(report.plugin.launch, { transport: 'stdio', command: 'node', args: ['server.mjs'], env: [], cwd: '.' });
    assert.deepEqual((report.plugin.discovery['resources'] as Array<{ uri: string }>).map((r) => r.uri), ['fixture://readme']);
    assert.deepEqual((report.plugin.discovery['prompts'] as Array<{ name: string }>).map((p) => p.name), ['summarise']);
    await harness.plugins.remove('bare');
  });

  it('rejects a manifest with hard errors, listing all of them, and leaves nothing behind', async () => {
    const repo = await createPluginRepo(root, 'bad-manifest');
    const cache = await cacheEntries();
    const error = await expectInstallFailure(() => harness.plugins.add(repo.remote, { name: 'broken' }), 'validation');
    const errors = (error.details as { errors: string[] }).errors;
    assert.ok(errors.some((e) => e.includes("'summary'")), errors.join('\n'));
    assert.ok(errors.some((e) => e.includes("'whenToUse'")), errors.join('\n'));
    // Seed 002: an example naming a tool the server does not register is a hard error.
    assert.ok(errors.some((e) => e.includes("unknown tool 'greet'")), errors.join('\n'));
    await assertNothingLeft('broken', cache);
  });

  it('fails at discovery for a server that crashes at start, with its stderr, leaving nothing', async () => {
    const repo = await createPluginRepo(root, 'crash');
    const cache = await cacheEntries();
    const error = await expectInstallFailure(() => harness.plugins.add(repo.remote), 'discovery');
    assert.match(error.message, /crashing on purpose|exited with code 3/);
    await assertNothingLeft('crash', cache);
  });

  it('fails at discovery for a server that hangs in initialize, within the bound, leaving no process', async () => {
    const repo = await createPluginRepo(root, 'hang');
    const cache = await cacheEntries();
    const started = Date.now();
    await expectInstallFailure(() => harness.plugins.add(repo.remote), 'discovery');
    assert.ok(Date.now() - started < 30_000, 'discovery is bounded');
    await assertNothingLeft('hang', cache);
    assert.deepEqual(harness.supervisor.processes(), []);
  });

  it('refuses a server that lists one tool name twice', async () => {
    const repo = await createPluginRepo(root, 'collide');
    const cache = await cacheEntries();
    const error = await expectInstallFailure(() => harness.plugins.add(repo.remote), 'discovery');
    assert.match(error.message, /'lookup' more than once/);
    await assertNothingLeft('collide', cache);
  });

  it('reports clone and checkout failures as such', async () => {
    const cache = await cacheEntries();
    await expectInstallFailure(() => harness.plugins.add(`file://${join(root, 'remotes', 'missing.git')}`, { name: 'missing' }), 'clone');
    await assertNothingLeft('missing', cache);
    const repo = await createPluginRepo(root, 'calc', { name: 'calc-refs' });
    await expectInstallFailure(() => harness.plugins.add(repo.remote, { name: 'no-such-ref', ref: 'v9.9.9' }), 'checkout');
    await assertNothingLeft('no-such-ref', cache);
  });

  it('fails at launch when nothing says how to start the plugin', async () => {
    const folder = join(root, 'no-launch');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'README.md'), 'no entry point\n');
    const cache = await cacheEntries();
    const error = await expectInstallFailure(() => harness.plugins.add(folder), 'launch');
    assert.match(error.message, /no quiver.json "launch" and no package.json/);
    await assertNothingLeft('no-launch', cache);
  });

  it('says which folder keeps the sandbox user out, instead of a bare sandbox failure', { skip: skipUnless(process.getuid?.() !== 0 && 'this check runs only as root') }, async () => {
    const privateRoot = join(root, 'private');
    await mkdir(privateRoot, { mode: 0o700 });
    await chmod(privateRoot, 0o700);
    await cp(calc.work, join(privateRoot, 'calc'), { recursive: true, filter: (source) => !source.includes('.git') });
    const error = await expectInstallFailure(() => harness.plugins.add(join(privateRoot, 'calc'), { name: 'private-calc' }), 'launch');
    assert.ok(error.message.includes(`cannot enter ${privateRoot}`), error.message);
  });

  it('references a local folder in place and never deletes it', async () => {
    const folder = join(root, 'local-calc');
    await cp(calc.work, folder, { recursive: true, filter: (source) => !source.includes('.git') });
    const report = await harness.plugins.add(folder, { name: 'local-calc' });
    assert.equal(report.plugin.sourceType, 'path');
    assert.equal(report.plugin.source['cachePath'], folder);
    await harness.plugins.remove('local-calc');
    assert.ok(existsSync(join(folder, 'server.mjs')));
  });
});
